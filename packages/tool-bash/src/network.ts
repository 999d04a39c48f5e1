/**
 * The bash tools' network (decision 0112): what a confining mode's commands may reach
 * (`bash.network`), the names one call may add with the user's approval (`network_allow`), how a
 * blocked name is read back from a run's markers, and the words of all of it.
 */
import { covers, parseNetEntry } from '@toolvisor/network'
import type { PlainProcessSpec } from '@toolvisor/process-runtime'
import { invalid } from './internal/args.js'
import { ESCALATION_COMMAND_LIMITS, nameList } from './modes.js'

/** `bash.network` as configured: the host's network, none, or an allow list through the proxy. */
export type BashNetwork =
  | 'host'
  | 'none'
  | { readonly allow: readonly string[]; readonly deny: readonly string[] }

/** The standing network of the confining modes when `bash.network` says nothing: an allow list that starts empty. */
export const DEFAULT_NETWORK: BashNetwork = { allow: [], deny: [] }

/** The most blocked names a hint lists; past them it says how many more. */
export const HINT_NAMES = 8

/** A sandbox policy's `net`. */
type NetPolicy = NonNullable<NonNullable<PlainProcessSpec['sandbox']>['net']>

/**
 * The `net` of a confining mode's policy: `network`, with `extra` (names one call was allowed)
 * added to its allow list. Nothing is published: a bash command's servers stay inside.
 */
export function netPolicyOf(network: BashNetwork, extra: readonly string[] = []): NetPolicy {
  if (typeof network === 'string') return network
  return { allow: [...network.allow, ...extra], deny: [...network.deny], publish: [] }
}

/** Each entry of a `bash.network` list, or why it is not one (the network gates' own check). */
export function entryProblem(text: string): string | undefined {
  const entry = parseNetEntry(text)
  return typeof entry === 'string' ? entry : undefined
}

/**
 * The names of `network_allow` the user must be asked about, for a call whose network is
 * `network` (the standing one of a confining mode; `host`: none to ask, it reaches them all).
 * An entry the allow list already covers is not asked about. Throws `BASH_ERR_INVALID_ARGUMENT`
 * (the call's error, nothing asked) for an entry that is no name, one the operator's deny list
 * covers, and for a network of `none`.
 */
export function namesToAsk(names: readonly string[], network: BashNetwork): string[] {
  for (const [index, name] of names.entries()) {
    const problem = entryProblem(name)
    if (problem !== undefined) throw invalid(NETWORK_TEXTS.invalidEntry(index, problem))
  }
  if (network === 'host') return []
  if (network === 'none') throw invalid(NETWORK_TEXTS.none)
  for (const [index, name] of names.entries()) {
    if (network.deny.some((bound) => covers(bound, name))) throw invalid(NETWORK_TEXTS.denied(index, name))
  }
  const asked: string[] = []
  for (const name of names) {
    if (network.allow.some((bound) => covers(bound, name)) || asked.includes(name)) continue
    asked.push(name)
  }
  return asked
}

/** The texts of a network escalation (`network_allow`), in the form of seed 001's escalation texts. */
export const NETWORK_TEXTS = {
  needsJustification: 'invalid escalation: network_allow requires a justification',
  /** A justification with nothing to justify; `fields`: what the tool takes it with. */
  justificationAlone: (fields: string) =>
    `invalid escalation: justification is only valid together with ${fields}`,
  notAvailable: 'network_allow is not available in this composition (no sandboxed network to widen)',
  none: 'network_allow is not available: the operator gives bash commands no network (bash.network "none")',
  invalidEntry: (index: number, problem: string) => `invalid network_allow[${index}]: ${problem}`,
  denied: (index: number, name: string) =>
    `invalid network_allow[${index}]: ${JSON.stringify(name)} is in the operator's deny list (bash.network.deny); no approval can allow it`,
  noService: (names: readonly string[]) =>
    `network escalation to ${nameList(names)} requires approval, but no approval service is composed`,
  noSession: (names: readonly string[]) =>
    `network escalation to ${nameList(names)} requires approval, but the call has no agent to route it through`,
  tooLong: (names: readonly string[], lines: number, characters: number) =>
    `network escalation to ${nameList(names)} was not asked: the command has ${lines} ${lines === 1 ? 'line' : 'lines'} and ${characters} characters, more than the approval prompt shows (at most ${ESCALATION_COMMAND_LIMITS.lines} lines and ${ESCALATION_COMMAND_LIMITS.characters} characters); write the script to a file and escalate the command that runs it`,
  rejected: (names: readonly string[]) => `the user rejected letting this command reach ${nameList(names)}`,
  cancelled: (names: readonly string[]) =>
    `approval for letting this command reach ${nameList(names)} was cancelled`,
  unavailable: (names: readonly string[]) =>
    `network escalation to ${nameList(names)} requires approval, but no approval channel is available`,
} as const

/**
 * A refused connection's marker, as the runtime writes it into stderr: the name (brackets kept
 * off an IPv6 address) when the list did not name it. Refusals the operator's list caused (`in the
 * deny list`, a local or reserved address) are not matched: no approval changes them.
 */
const UNLISTED = /^\[network: blocked (\[[^\]\s]+\]|[^\s:\]]+):(\d{1,5}), not in the allow list\]$/gm

/**
 * The hosts a run's stderr shows blocked for not being in the allow list, in the order first
 * blocked, each once; only those an entry of `network_allow` could name.
 */
export function blockedHosts(stderr: string): string[] {
  const hosts: string[] = []
  for (const match of stderr.matchAll(UNLISTED)) {
    const host = match[1]!.replace(/^\[(.*)\]$/, '$1')
    if (!hosts.includes(host) && entryProblem(host) === undefined) hosts.push(host)
  }
  return hosts
}

/** The hosts as a hint lists them: `["a.test", "b.test"]`, at most `HINT_NAMES`, then `and N more`. */
export function hintList(hosts: readonly string[]): string {
  const shown = `[${nameList(hosts.slice(0, HINT_NAMES))}]`
  return hosts.length > HINT_NAMES ? `${shown} and ${hosts.length - HINT_NAMES} more` : shown
}
