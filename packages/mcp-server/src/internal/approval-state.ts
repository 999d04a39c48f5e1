import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ApprovalRequest } from '@toolvisor/toolbox'

/** The call a state was minted for, and is good for: its session, its tool and its arguments. */
export interface StateCall {
  readonly sessionId: string
  /** The tool's name as the client called it. */
  readonly tool: string
  readonly args: Readonly<Record<string, unknown>>
}

/** What a state binds, besides the call: the question asked, in the words it was asked. */
interface Claims {
  readonly session: string
  readonly tool: string
  /** SHA-256 of the call's arguments, in canonical JSON. */
  readonly args: string
  readonly question: QuestionClaims
  readonly nonce: string
  /** When it stops being good, in ms since the epoch. */
  readonly expires: number
}

/**
 * The question a state answers: who asks, a digest of the exact command, its mode and place, and
 * a digest of the network names it may also reach (decision 0112; null: none asked for).
 */
interface QuestionClaims {
  readonly asker: string
  readonly command: string
  readonly mode: string
  readonly workdir: string | null
  readonly background: boolean
  readonly network: string | null
}

/** A verified state: the question it answers, to compare with the one the tool asks again. */
export interface VerifiedState {
  /** Whether `request` is the very question this state was minted for. */
  answers(request: ApprovalRequest): boolean
}

/** The longest state read; a longer one is refused unread. */
const MAX_STATE_CHARACTERS = 4096

/** What separates the claims from their MAC, and what the MAC covers first (a domain tag). */
const DOMAIN = 'toolvisor.approval-state.v1\n'

/**
 * The `requestState` of an `input_required` escalation round (decision 0109, point 3): claims an
 * HMAC-SHA256 protects, under a key made here and never written down, so a state minted before a
 * restart, by another toolvisor, or altered on the way is refused. A state is bound to its session,
 * the call (tool and arguments) and the question, expires after `ttlMs`, and is spent by the first
 * retry that presents it, whatever that retry answers.
 */
export class ApprovalStates {
  readonly #key = randomBytes(32)
  /** Nonces already presented, with when they would have expired (then they are forgotten). */
  readonly #spent = new Map<string, number>()

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The state of a round that asks `question` for `call`. */
  mint(call: StateCall, question: ApprovalRequest): string {
    const claims: Claims = {
      session: call.sessionId,
      tool: call.tool,
      args: digest(canonical(call.args)),
      question: questionClaims(question),
      nonce: randomBytes(16).toString('base64url'),
      expires: this.now() + this.ttlMs,
    }
    const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
    return `${payload}.${this.#mac(payload)}`
  }

  /**
   * Verifies `state` for `call` and spends it. Answers the verified state, or why it is refused (a
   * sentence): altered, expired, spent, or minted for another session, tool or arguments.
   */
  redeem(state: string, call: StateCall): VerifiedState | string {
    const claims = this.#open(state)
    if (typeof claims === 'string') return claims
    const now = this.now()
    if (claims.expires <= now) return 'it has expired; call again to be asked again'
    if (claims.session !== call.sessionId) return 'it was issued to another session'
    if (this.#spent.has(claims.nonce))
      return 'it was already used by a retry; each state is good for one retry'
    // Spent before the rest is compared: a state presented with changed arguments is gone too.
    this.#spend(claims.nonce, claims.expires, now)
    if (claims.tool !== call.tool) return `it was issued for tool "${claims.tool}"`
    if (claims.args !== digest(canonical(call.args))) return 'it was issued for other arguments'
    return {
      answers: (request) => sameQuestion(claims.question, questionClaims(request)),
    }
  }

  #open(state: string): Claims | string {
    const altered = 'it is not a state this server issued, or it was altered'
    if (state.length > MAX_STATE_CHARACTERS) return altered
    const dot = state.indexOf('.')
    if (dot < 0) return altered
    const payload = state.slice(0, dot)
    const mac = Buffer.from(state.slice(dot + 1), 'base64url')
    const expected = Buffer.from(this.#mac(payload), 'base64url')
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return altered
    // The MAC held: the claims are ours, written by `mint`.
    return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Claims
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#key).update(DOMAIN).update(payload).digest('base64url')
  }

  #spend(nonce: string, expires: number, now: number): void {
    for (const [spent, until] of this.#spent) if (until <= now) this.#spent.delete(spent)
    this.#spent.set(nonce, expires)
  }
}

function questionClaims(request: ApprovalRequest): QuestionClaims {
  return {
    asker: request.tool,
    command: digest(request.command),
    mode: request.mode,
    workdir: request.workdir ?? null,
    background: request.background,
    // In the order asked: the prompt lists them so, and the tool asks them so on the retry.
    network: request.network?.length ? digest(JSON.stringify(request.network)) : null,
  }
}

function sameQuestion(a: QuestionClaims, b: QuestionClaims): boolean {
  return (
    a.asker === b.asker &&
    a.command === b.command &&
    a.mode === b.mode &&
    a.workdir === b.workdir &&
    a.background === b.background &&
    a.network === b.network
  )
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}

/** JSON with every object's keys sorted, so the same arguments always digest the same. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  )
}
