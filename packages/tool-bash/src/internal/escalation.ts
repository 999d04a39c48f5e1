/**
 * The mode a call runs under (seed 001's "escalation grant > session override > default") and the
 * network names it may also reach (decision 0112), and the escalation gate: an escalating call
 * asks the `approval` seam BEFORE anything executes, once for the mode and the names, and every
 * answer but `allowed-once` fails closed with its own text.
 */
import type { Approval, ToolCallContext } from '@toolvisor/toolbox'
import { ESCALATION_COMMAND_LIMITS, ESCALATION_TEXTS, rank, type SandboxMode } from '../modes.js'
import { type BashNetwork, NETWORK_TEXTS, namesToAsk } from '../network.js'
import { invalid } from './args.js'

/** The modes of a toolvisor's bash: the configured default and each session's lowered one. */
export class StandingModes {
  /** The operator's mode; absent: bash is not sandboxed. */
  readonly default: SandboxMode | undefined
  readonly #sessions = new Map<string, SandboxMode>()

  constructor(mode: SandboxMode | undefined) {
    this.default = mode
  }

  /** Whether the default confines: then `bash` advertises `sandbox_permissions` (seed 001). */
  get confining(): boolean {
    return this.default !== undefined && this.default !== 'danger-full-access'
  }

  /** The session's standing mode: its own lowered one, else the default. */
  of(session: string | undefined): SandboxMode | undefined {
    return (session === undefined ? undefined : this.#sessions.get(session)) ?? this.default
  }

  /**
   * Sets the session's standing mode to `mode`, never wider than it is now (a session may lower
   * itself, never raise itself: wider is one call at a time, approved). Returns the mode it had.
   */
  lower(session: string, mode: SandboxMode): SandboxMode {
    const current = this.of(session) ?? 'danger-full-access'
    if (rank(mode) > rank(current)) {
      throw invalid(
        `sandbox mode "${mode}" is wider than this session's current "${current}" mode; a session can only lower its mode (one command can ask for more with sandbox_permissions)`,
      )
    }
    this.#sessions.set(session, mode)
    return current
  }

  /** Forgets a closed session. */
  forget(session: string): void {
    this.#sessions.delete(session)
  }
}

/** The escalation arguments of a `bash` call, as parsed (strings, unchecked beyond that). */
export interface EscalationArgs {
  readonly command: string
  readonly sandbox_permissions?: string | undefined
  /** Network names this one call may also reach (decision 0112). */
  readonly network_allow?: readonly string[] | undefined
  readonly justification?: string | undefined
}

/**
 * Where and how the command would run, as the user is shown it beside the command: they change what
 * "this exact command" does.
 */
export interface EscalationPlace {
  /**
   * The directory it runs in, resolved: read only once the escalation is valid, so a bad workdir
   * fails (`BASH_ERR_WORKDIR`) after the escalation checks and before anyone is asked.
   */
  workdir(): string
  /** It runs on as a background task after the call answers (`run_in_background`, or MCP Tasks). */
  readonly background: boolean
}

/** What one call runs under: its mode, and the names it may reach beyond the standing network. */
export interface CallGrant {
  /** The mode; absent: bash is not sandboxed. */
  readonly mode: SandboxMode | undefined
  /** Network names the user allowed for this call only; empty: the standing network. */
  readonly network: readonly string[]
}

/** What decides a call's grant: the standing modes and network, the approval service, the call's place. */
export interface EscalationGate {
  readonly modes: StandingModes
  /** `bash.network`: what the confining modes' commands reach. */
  readonly network: BashNetwork
  readonly approval: Approval | undefined
  readonly place: EscalationPlace
  /** The escalation fields the tool takes besides `justification` (seed 001's bash takes both). */
  readonly fields: 'sandbox_permissions or network_allow' | 'network_allow'
}

/**
 * Seed 001's checks, in its order: each field without the other, an empty justification, no
 * sandboxing to escalate; `network_allow` is checked the same way beside `sandbox_permissions`,
 * and each of its entries must be a name. Returns the requested mode (undefined: none asked) and
 * the names asked for, or undefined for a call that asks nothing.
 */
export function requested(
  args: EscalationArgs,
  gate: Pick<EscalationGate, 'modes' | 'fields'>,
): { readonly mode: SandboxMode | undefined; readonly names: readonly string[] | undefined } | undefined {
  const { sandbox_permissions: wanted, network_allow: names, justification } = args
  if (wanted === undefined && names === undefined && justification === undefined) return undefined
  if (justification === undefined) {
    throw invalid(
      wanted !== undefined ? ESCALATION_TEXTS.needsJustification : NETWORK_TEXTS.needsJustification,
    )
  }
  if (wanted === undefined && names === undefined) {
    throw invalid(NETWORK_TEXTS.justificationAlone(gate.fields))
  }
  if (justification.trim().length === 0) throw invalid(ESCALATION_TEXTS.emptyJustification)
  if (!gate.modes.confining) {
    throw invalid(wanted !== undefined ? ESCALATION_TEXTS.notAvailable : NETWORK_TEXTS.notAvailable)
  }
  return { mode: wanted as SandboxMode | undefined, names }
}

/**
 * What this call runs under: the session's standing mode and network, or, for an escalating call,
 * the wider mode and the names asked for once the user allowed them (nothing is stored: the next
 * call has the standing ones again). A non-widening mode fails without asking anyone; names the
 * standing network already reaches are not asked about (a call that then asks nothing runs as it
 * stands); no approval service, no session, `rejected`, `cancelled` and `unavailable` each fail
 * with their own text, and nothing runs. Only one question is asked, for the mode and the names.
 */
export async function callGrant(
  args: EscalationArgs,
  ctx: ToolCallContext,
  gate: EscalationGate,
): Promise<CallGrant> {
  const { modes, approval, place } = gate
  const asked = requested(args, gate)
  const current = modes.of(ctx.sessionId)
  if (asked === undefined) return { mode: current, network: [] }
  const wanted = asked.mode
  if (wanted !== undefined && current !== undefined && rank(wanted) <= rank(current)) {
    throw invalid(ESCALATION_TEXTS.notWider(wanted, current))
  }
  const mode = wanted ?? current
  // danger-full-access runs unsandboxed, with the host's network: every name is in reach.
  const network = mode === 'danger-full-access' || mode === undefined ? 'host' : gate.network
  const names = namesToAsk(asked.names ?? [], network)
  if (wanted === undefined && names.length === 0) return { mode, network: [] }
  const texts = textsFor(wanted, names)
  if (approval === undefined) throw invalid(texts.noService)
  if (ctx.sessionId === undefined) throw invalid(texts.noSession)
  const lines = args.command.split('\n').length
  const { lines: maxLines, characters: maxCharacters } = ESCALATION_COMMAND_LIMITS
  if (lines > maxLines || args.command.length > maxCharacters) {
    throw invalid(texts.tooLong(lines, args.command.length))
  }
  const outcome = await approval.request({
    sessionId: ctx.sessionId,
    connection: ctx.connection,
    tool: 'bash',
    command: args.command,
    justification: args.justification as string,
    workdir: place.workdir(),
    background: place.background,
    mode: mode as SandboxMode,
    ...(names.length > 0 ? { network: names } : {}),
    signal: ctx.signal,
  })
  switch (outcome) {
    case 'allowed-once':
      return { mode, network: names }
    case 'rejected':
      throw invalid(texts.rejected)
    case 'cancelled':
      throw invalid(texts.cancelled)
    default:
      throw invalid(texts.unavailable)
  }
}

/** The texts of one escalation: seed 001's for a mode (the names added when asked with it), or the network's. */
function textsFor(mode: SandboxMode | undefined, names: readonly string[]) {
  if (mode === undefined) {
    return {
      noService: NETWORK_TEXTS.noService(names),
      noSession: NETWORK_TEXTS.noSession(names),
      tooLong: (lines: number, characters: number) => NETWORK_TEXTS.tooLong(names, lines, characters),
      rejected: NETWORK_TEXTS.rejected(names),
      cancelled: NETWORK_TEXTS.cancelled(names),
      unavailable: NETWORK_TEXTS.unavailable(names),
    }
  }
  return {
    noService: ESCALATION_TEXTS.noService(mode, names),
    noSession: ESCALATION_TEXTS.noSession(mode, names),
    tooLong: (lines: number, characters: number) => ESCALATION_TEXTS.tooLong(mode, lines, characters, names),
    rejected: ESCALATION_TEXTS.rejected(mode, names),
    cancelled: ESCALATION_TEXTS.cancelled(mode, names),
    unavailable: ESCALATION_TEXTS.unavailable(mode, names),
  }
}
