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
 * `net`: what it may reach (decision 0112: `bash.network`, by default an allow list that starts empty).
 */
export function policyOf(
  mode: Exclude<SandboxMode, 'danger-full-access'>,
  root: string,
  tmp: 'private' | 'shared' = 'private',
  net: Policy['net'] = 'host',
): Policy {
  // The root is granted by name too: a private /tmp would otherwise hide a working directory below it.
  // `/` holds toolvisor's own state: the mechanism masks it (decision 0095).
  if (mode === 'read-only') return { fs: { read: ['/', root] }, net, tmp: 'none', ownPaths: 'mask' }
  return { fs: { read: ['/'], write: [root] }, net, tmp, ownPaths: 'mask' }
}

/** A plain process's sandbox policy. */
type Policy = NonNullable<PlainProcessSpec['sandbox']>

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

/**
 * What a text names as asked for: the mode, as seed 001 quotes it, and the network names asked
 * with it (decision 0112), when there are any.
 */
function target(mode: string, names: readonly string[]): string {
  return names.length === 0 ? `"${mode}"` : `"${mode}" with network access to ${nameList(names)}`
}

/** Seed 001's escalation validation and outcome texts; `names`: the network names asked with the mode. */
export const ESCALATION_TEXTS = {
  needsJustification: 'invalid escalation: sandbox_permissions requires a justification',
  emptyJustification: 'invalid justification: expected a non-empty sentence',
  notAvailable:
    'sandbox_permissions is not available in this composition (no sandboxing executor to escalate)',
  notWider: (mode: string, current: string) =>
    `sandbox escalation to "${mode}" is not strictly wider than this call's current "${current}" mode`,
  noService: (mode: string, names: readonly string[] = []) =>
    `sandbox escalation to ${target(mode, names)} requires approval, but no approval service is composed`,
  noSession: (mode: string, names: readonly string[] = []) =>
    `sandbox escalation to ${target(mode, names)} requires approval, but the call has no agent to route it through`,
  tooLong: (mode: string, lines: number, characters: number, names: readonly string[] = []) =>
    `sandbox escalation to ${target(mode, names)} was not asked: the command has ${lines} ${lines === 1 ? 'line' : 'lines'} and ${characters} characters, more than the approval prompt shows (at most ${ESCALATION_COMMAND_LIMITS.lines} lines and ${ESCALATION_COMMAND_LIMITS.characters} characters); write the script to a file and escalate the command that runs it`,
  rejected: (mode: string, names: readonly string[] = []) =>
    `the user rejected escalating this command to ${target(mode, names)}`,
  cancelled: (mode: string, names: readonly string[] = []) =>
    `approval for escalating to ${target(mode, names)} was cancelled`,
  unavailable: (mode: string, names: readonly string[] = []) =>
    `sandbox escalation to ${target(mode, names)} requires approval, but no approval channel is available`,
} as const

/** A list of names as the texts show it: `"a.test", "b.test"`. */
export function nameList(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(', ')
}
