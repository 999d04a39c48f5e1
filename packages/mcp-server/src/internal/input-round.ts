import {
  type InputRequiredResult,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server'
import type { ApprovalOutcome, ApprovalRequest, ConnectionId } from '@toolvisor/toolbox'
import { approvalMessage } from './approval-message.js'
import type { ApprovalStates, StateCall, VerifiedState } from './approval-state.js'

/** The key of the one input request an escalation round makes. */
export const APPROVAL_INPUT_KEY = 'approval'

/** What one 2026-07-28 `tools/call` brings to its round: the call, and what a retry carries. */
export interface RoundCall extends StateCall {
  /** The echoed `requestState` (`ctx.mcpReq.requestState()`), when the call is a retry. */
  readonly requestState: unknown
  /** The retry's `inputResponses` (`ctx.mcpReq.inputResponses`), untrusted. */
  readonly inputResponses: Readonly<Record<string, unknown>> | undefined
  /** Whether the client declared form elicitation in the request's capabilities. */
  readonly canElicit: boolean
}

/**
 * One 2026-07-28 `tools/call` seen by the approval seam (decision 0109, point 3): the tool's
 * question is answered from the call's own verified retry, or the call answers `input_required`
 * instead of the tool's result. Made per call, so a question is only ever answered by the call that
 * asked (a retry is that call again).
 */
export class InputRound {
  /** The call's `ctx.connection`: how the seam finds this round when the tool asks. */
  readonly connection: ConnectionId
  readonly #call: RoundCall
  readonly #states: ApprovalStates
  readonly #verified: VerifiedState | undefined
  #asked: ApprovalRequest | undefined
  #refusal: string | undefined
  #answered = false

  /** Verifies a retry's state before anything runs: a state refused is a protocol error (`-32602`). */
  constructor(states: ApprovalStates, call: RoundCall) {
    this.connection = Symbol(`mcp call of session ${call.sessionId}`)
    this.#call = call
    this.#states = states
    const state = call.requestState
    if (state === undefined) return
    const verified = typeof state === 'string' ? states.redeem(state, call) : 'it is not a string'
    if (typeof verified === 'string') throw mismatch(verified)
    this.#verified = verified
  }

  /**
   * The outcome of the tool's question. A retry's verified answer to this very question decides it;
   * anything else is `unavailable` to the tool, which then runs nothing, and the call answers
   * `input_required` (the first question of a call that can be asked) or a protocol error (a retry
   * whose state was for another question) instead of the tool's result.
   */
  answer(request: ApprovalRequest): ApprovalOutcome {
    // A call answers for its own session only: a request naming another is a bug, refused.
    if (request.sessionId !== this.#call.sessionId) return 'unavailable'
    if (this.#answered || this.#asked !== undefined || this.#refusal !== undefined) return 'unavailable'
    const verified = this.#verified
    if (verified === undefined) {
      if (this.#call.canElicit) this.#asked = request
      return 'unavailable'
    }
    if (!verified.answers(request)) {
      this.#refusal =
        'it was issued for another command, mode, working directory, background choice or network names'
      return 'unavailable'
    }
    this.#answered = true
    return outcomeOf(this.#call.inputResponses?.[APPROVAL_INPUT_KEY])
  }

  /**
   * What the call answers instead of the tool's result: `input_required` with the question and a
   * fresh state, or undefined (the result stands). Throws the protocol error of a refused retry.
   */
  settle(): InputRequiredResult | undefined {
    if (this.#refusal !== undefined) throw mismatch(this.#refusal)
    const asked = this.#asked
    if (asked === undefined) return undefined
    return inputRequired({
      inputRequests: {
        [APPROVAL_INPUT_KEY]: inputRequired.elicit({
          mode: 'form',
          message: approvalMessage(asked),
          requestedSchema: { type: 'object', properties: {} },
        }),
      },
      requestState: this.#states.mint(this.#call, asked),
    })
  }
}

/** The user's answer in an elicitation result; no answer (or one of no known form) is a dismissal. */
function outcomeOf(response: unknown): ApprovalOutcome {
  const action =
    typeof response === 'object' && response !== null ? Reflect.get(response, 'action') : undefined
  if (action === 'accept') return 'allowed-once'
  return action === 'decline' ? 'rejected' : 'cancelled'
}

function mismatch(why: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `the approval state does not match this call: ${why}`,
  )
}

/**
 * The open rounds of one `McpApprovals`, by the call's connection identity, and the key their
 * states are signed with.
 */
export class Rounds {
  readonly #open = new Map<ConnectionId, InputRound>()

  constructor(private readonly states: ApprovalStates) {}

  /**
   * Opens the round of one 2026-07-28 call: its `connection` is the call's `ctx.connection`, and
   * `close` must be called once the tool answered. Throws the protocol error of a refused
   * `requestState` before anything runs.
   */
  open(call: RoundCall): { readonly round: InputRound; close(): void } {
    const round = new InputRound(this.states, call)
    this.#open.set(round.connection, round)
    return { round, close: () => this.#open.delete(round.connection) }
  }

  /** The round of a question's connection, when that connection is an open call's. */
  get(connection: ConnectionId): InputRound | undefined {
    return this.#open.get(connection)
  }
}
