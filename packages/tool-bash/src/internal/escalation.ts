/**
 * The mode a call runs under (seed 001's "escalation grant > session override > default"), and
 * the escalation gate: an escalating call asks the `approval` seam BEFORE anything executes, and
 * every answer but `allowed-once` fails closed with its own text.
 */
import type { Approval, ToolCallContext } from '@toolvisor/toolbox'
import { ESCALATION_COMMAND_LIMITS, ESCALATION_TEXTS, rank, type SandboxMode } from '../modes.js'
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

/**
 * Seed 001's checks, in its order: each field without the other, an empty justification, no
 * sandboxing to escalate. Returns the requested mode, or undefined for a call that asks nothing.
 */
export function requestedMode(args: EscalationArgs, modes: StandingModes): SandboxMode | undefined {
  const { sandbox_permissions: wanted, justification } = args
  if (wanted === undefined && justification === undefined) return undefined
  if (justification === undefined) throw invalid(ESCALATION_TEXTS.needsJustification)
  if (wanted === undefined) throw invalid(ESCALATION_TEXTS.needsPermissions)
  if (justification.trim().length === 0) throw invalid(ESCALATION_TEXTS.emptyJustification)
  if (!modes.confining) throw invalid(ESCALATION_TEXTS.notAvailable)
  return wanted as SandboxMode
}

/**
 * The mode this call runs under: the session's standing mode, or, for an escalating call, the
 * wider mode once the user allowed it (nothing is stored: the next call has the standing mode
 * again). A non-widening request fails without asking anyone; no approval service, no session,
 * `rejected`, `cancelled` and `unavailable` each fail with their own text, and nothing runs.
 */
export async function callMode(
  args: EscalationArgs,
  ctx: ToolCallContext,
  gate: {
    readonly modes: StandingModes
    readonly approval: Approval | undefined
    readonly place: EscalationPlace
  },
): Promise<SandboxMode | undefined> {
  const { modes, approval, place } = gate
  const wanted = requestedMode(args, modes)
  const current = modes.of(ctx.sessionId)
  if (wanted === undefined) return current
  if (current !== undefined && rank(wanted) <= rank(current)) {
    throw invalid(ESCALATION_TEXTS.notWider(wanted, current))
  }
  if (approval === undefined) throw invalid(ESCALATION_TEXTS.noService(wanted))
  if (ctx.sessionId === undefined) throw invalid(ESCALATION_TEXTS.noSession(wanted))
  const lines = args.command.split('\n').length
  const { lines: maxLines, characters: maxCharacters } = ESCALATION_COMMAND_LIMITS
  if (lines > maxLines || args.command.length > maxCharacters) {
    throw invalid(ESCALATION_TEXTS.tooLong(wanted, lines, args.command.length))
  }
  const outcome = await approval.request({
    sessionId: ctx.sessionId,
    connection: ctx.connection,
    tool: 'bash',
    command: args.command,
    justification: args.justification as string,
    workdir: place.workdir(),
    background: place.background,
    mode: wanted,
    signal: ctx.signal,
  })
  switch (outcome) {
    case 'allowed-once':
      return wanted
    case 'rejected':
      throw invalid(ESCALATION_TEXTS.rejected(wanted))
    case 'cancelled':
      throw invalid(ESCALATION_TEXTS.cancelled(wanted))
    default:
      throw invalid(ESCALATION_TEXTS.unavailable(wanted))
  }
}
