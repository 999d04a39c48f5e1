/**
 * The `approval` seam: asking the user, before anything runs, whether one call may do more than
 * its standing policy allows (seed 001's escalation gate). Any host provides it: `mcp-server`
 * asks through MCP elicitation, a host library asks in its own UI. A tool reads it when it needs
 * it (`ctx.get(ApprovalToken)`), so a composition without one fails closed instead of waiting.
 */
import { token } from '@toolvisor/kernel'
import type { ConnectionId } from './types.js'

/**
 * What the user answered. `allowed-once`: that one call may run wider, nothing is stored;
 * `rejected`: the user said no; `cancelled`: the question was dismissed or the call was aborted
 * while it waited; `unavailable`: there is no way to ask this session's user.
 */
export type ApprovalOutcome = 'allowed-once' | 'rejected' | 'cancelled' | 'unavailable'

/**
 * One question to the user of a session. Every text field comes from the model: a provider shows
 * each of them escaped (control codes, bidi, zero-width visible) and whole, so the user approves
 * only what they can see (decision 0093).
 */
export interface ApprovalRequest {
  /** The session whose user is asked (the call's `ctx.sessionId`). */
  readonly sessionId: string | undefined
  /**
   * The connection that made the call (the call's `ctx.connection`): the only one that is asked,
   * whatever other connections share its session. Absent: a provider with connections answers
   * `unavailable`.
   */
  readonly connection: ConnectionId | undefined
  /** The tool asking (`bash`). */
  readonly tool: string
  /** The exact command (or action) to allow once. */
  readonly command: string
  /** The model's one sentence on why it needs more. */
  readonly justification: string
  /** The directory the command runs in, resolved (absolute); absent for a tool without one. */
  readonly workdir: string | undefined
  /** Whether the command runs on in the background after the call answers (`run_in_background`). */
  readonly background: boolean
  /** What the call would run under once allowed (`workspace-write`, `danger-full-access`). */
  readonly mode: string
  /**
   * Network names (`registry.npmjs.org`, `*.github.com`, `host:5432`) the command may also reach
   * for this one call, beyond its standing allow list (decision 0112). Absent or empty: the
   * question is about the mode alone.
   */
  readonly network?: readonly string[] | undefined
  /** The call's signal: aborting it withdraws the question (`cancelled`). */
  readonly signal: AbortSignal
}

/** The `approval` service. Never rejects: every failure to ask is an outcome, so callers fail closed. */
export interface Approval {
  request(request: ApprovalRequest): Promise<ApprovalOutcome>
}

/** The `approval` token: provided by a host that can ask its user (`mcp-server`'s elicitation). */
export const ApprovalToken = token<Approval>('approval')
