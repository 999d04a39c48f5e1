/**
 * Seed 001's sandbox modes and their words: the policy each mode is, which modes widen which,
 * how a denial is recognised and reported, and the escalation texts (exactly the seed's: an
 * interface a model written against that harness reads).
 */
import type { PlainProcessSpec } from '@toolvisor/process-runtime'

/** The standing modes, narrowest first. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/** A sandbox mode. */
export type SandboxMode = (typeof SANDBOX_MODES)[number]

/** What `sandbox_permissions` may ask for: the modes that can be wider than another. */
export const ESCALATION_MODES = ['workspace-write', 'danger-full-access'] as const

/** How wide a mode is: a call may only widen (escalation) or a session only narrow (its standing mode). */
export function rank(mode: SandboxMode): number {
  return SANDBOX_MODES.indexOf(mode)
}

/**
 * The sandbox a confining mode is, for `preparePlain` (decision 0034). Every file readable that
 * the mechanism and the sandbox user allow. `read-only`: nothing writable; /tmp private where the
 * mechanism has a mount namespace (bwrap), none at all otherwise (Landlock): never the host's.
 * `workspace-write`: the session's working directory `root` writable, and a /tmp: private first,
 * the host's where the mechanism has no private one (Landlock; `tmp` says which to try).
 * toolvisor's own paths below `/` (its state, the token, the envdir root) are masked, never shown.
 */
export function policyOf(
  mode: Exclude<SandboxMode, 'danger-full-access'>,
  root: string,
  tmp: 'private' | 'shared' = 'private',
): NonNullable<PlainProcessSpec['sandbox']> {
  // The root is granted by name too: a private /tmp would otherwise hide a working directory below it.
  // `/` holds toolvisor's own state: the mechanism masks it (decision 0095).
  if (mode === 'read-only') return { fs: { read: ['/', root] }, net: 'host', tmp: 'none', ownPaths: 'mask' }
  return { fs: { read: ['/'], write: [root] }, net: 'host', tmp, ownPaths: 'mask' }
}

/**
 * The errors each mechanism's denial of a write shows on stderr (bwrap: the tree is a read-only
 * mount, EROFS; Landlock: EACCES). Conservative and inferred from text: an application's own
 * "Permission denied" under Landlock counts too (stated in the README's limits).
 */
const DENIALS: Readonly<Record<string, RegExp>> = {
  bwrap: /Read-only file system/,
  landlock: /Permission denied|Read-only file system/,
}

/**
 * What a permission the mode's user lacks shows (EACCES, EPERM): the mode's doing when it runs
 * commands as another user than toolvisor's own, since toolvisor is root then (the sandbox user
 * applies to a root toolvisor only) and `danger-full-access` runs as toolvisor (decision 0101).
 */
const USER_DENIAL = /Permission denied|Operation not permitted/

/** How much of the end of stderr the classification reads. */
export const DENIAL_TAIL_BYTES = 16_384

/**
 * True when a failed run's stderr shows the sandbox denying a file access: the mechanism's own
 * denial, or, when the mode runs commands as another user (`otherUser`), a permission that user
 * lacks. Classified by what the mode and its user caused, not by errno alone.
 */
export function deniedBy(
  mechanism: string | undefined,
  code: number | null,
  stderr: string,
  otherUser = false,
): boolean {
  if (mechanism === undefined || code === null || code === 0) return false
  if (DENIALS[mechanism]?.test(stderr)) return true
  return otherUser && USER_DENIAL.test(stderr)
}

/** Seed 001's denial marker. */
export function denialMarker(mode: SandboxMode): string {
  return `[sandbox: file access denied under ${mode} mode]`
}

/** Seed 001's escalation hint (dsh-bash-sandbox's words), after the denial marker when escalation is available. */
export const ESCALATION_HINT =
  '[sandbox: escalation available — retry this exact command once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]'

/**
 * The most lines and characters a command asked for with `sandbox_permissions` may have: the
 * approval prompt quotes every line, and a user must never approve what they cannot read through.
 * A longer script goes in a file, and the command that runs it is what the user approves.
 */
export const ESCALATION_COMMAND_LIMITS = { lines: 200, characters: 16_384 } as const

/** Seed 001's escalation validation and outcome texts. */
export const ESCALATION_TEXTS = {
  needsJustification: 'invalid escalation: sandbox_permissions requires a justification',
  needsPermissions: 'invalid escalation: justification is only valid together with sandbox_permissions',
  emptyJustification: 'invalid justification: expected a non-empty sentence',
  notAvailable:
    'sandbox_permissions is not available in this composition (no sandboxing executor to escalate)',
  notWider: (mode: string, current: string) =>
    `sandbox escalation to "${mode}" is not strictly wider than this call's current "${current}" mode`,
  noService: (mode: string) =>
    `sandbox escalation to "${mode}" requires approval, but no approval service is composed`,
  noSession: (mode: string) =>
    `sandbox escalation to "${mode}" requires approval, but the call has no agent to route it through`,
  tooLong: (mode: string, lines: number, characters: number) =>
    `sandbox escalation to "${mode}" was not asked: the command has ${lines} ${lines === 1 ? 'line' : 'lines'} and ${characters} characters, more than the approval prompt shows (at most ${ESCALATION_COMMAND_LIMITS.lines} lines and ${ESCALATION_COMMAND_LIMITS.characters} characters); write the script to a file and escalate the command that runs it`,
  rejected: (mode: string) => `the user rejected escalating this command to "${mode}"`,
  cancelled: (mode: string) => `approval for escalating to "${mode}" was cancelled`,
  unavailable: (mode: string) =>
    `sandbox escalation to "${mode}" requires approval, but no approval channel is available`,
} as const
