import type { Account } from '@toolvisor/run-as'
import type { PreparedTool, RunContext } from '../types.js'
import { readEnvdir } from './envdir.js'

/**
 * Which variables of the runtime's own environment a tool starts from (the operator's policy,
 * after Codex's `shell_environment_policy`): `inherit` picks the start (`all`, `core` or `none`),
 * names matching the default excludes (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, case
 * insensitive) and `exclude` are removed, `includeOnly` keeps only the names it matches, and
 * `set` adds fixed values last. Patterns are shell-style with `*`.
 */
export interface EnvironmentPolicy {
  /** Default: `core` for sandboxed tools, `all` for the others. */
  readonly inherit?: 'all' | 'core' | 'none' | undefined
  readonly ignoreDefaultExcludes?: boolean | undefined
  readonly exclude?: readonly string[] | undefined
  readonly includeOnly?: readonly string[] | undefined
  readonly set?: Readonly<Record<string, string>> | undefined
}

/** The policy a tool's start applies, with `inherit` decided. */
export type EffectivePolicy = EnvironmentPolicy & { readonly inherit: 'all' | 'core' | 'none' }

/** What `inherit: core` keeps. */
export const CORE_VARIABLES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LANG',
  'LC_*',
  'TERM',
  'TZ',
  'TMPDIR',
  'SHELL',
]

/** The names never inherited unless `ignoreDefaultExcludes` (an agent's API keys live in such variables). */
export const DEFAULT_EXCLUDES: readonly string[] = ['*KEY*', '*SECRET*', '*TOKEN*', '*PASSWORD*']

/** The policy for one tool: the toolbox's fields over the global ones, `inherit` by sandboxing. */
export function effectivePolicy(
  global: EnvironmentPolicy | undefined,
  toolbox: EnvironmentPolicy | undefined,
  sandboxed: boolean,
): EffectivePolicy {
  const merged: Record<string, unknown> = { ...global }
  // A field the toolbox leaves out keeps the global value.
  for (const [key, value] of Object.entries(toolbox ?? {})) if (value !== undefined) merged[key] = value
  const policy = merged as EnvironmentPolicy
  return { ...policy, inherit: policy.inherit ?? (sandboxed ? 'core' : 'all') }
}

function matcher(patterns: readonly string[]): (name: string) => boolean {
  const regexes = patterns.map(
    (pattern) => new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`, 'i'),
  )
  return (name) => regexes.some((regex) => regex.test(name))
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
}

/** The variables of `source` (the runtime's environment) a tool under `policy` starts from. */
export function inherited(
  policy: EffectivePolicy,
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {}
  if (policy.inherit === 'none') return { ...policy.set }
  const core = matcher(CORE_VARIABLES)
  const excluded = matcher([
    ...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES),
    ...(policy.exclude ?? []),
  ])
  const only = policy.includeOnly === undefined ? undefined : matcher(policy.includeOnly)
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue
    if (policy.inherit === 'core' && !core(name)) continue
    if (excluded(name) || (only !== undefined && !only(name))) continue
    env[name] = value
  }
  return { ...env, ...policy.set }
}

/** The context variables (protocol §1); set last so a tool cannot spoof them (ruling 3). */
const CONTEXT: ReadonlyArray<readonly [keyof RunContext, string]> = [
  ['sessionId', 'AGENT_SESSION_ID'],
  ['turnId', 'AGENT_TURN_ID'],
  ['conversationId', 'AGENT_CONVERSATION_ID'],
  ['agentId', 'AGENT_AGENT_ID'],
]

/**
 * The environment of one start, in the order of ruling 3: the runtime's own environment filtered
 * by the tool's policy, the identity of the user it runs as (`HOME`, `USER`, `LOGNAME`, when that
 * is not the runtime's user), the envdir (read now, at every start), `environment`, the
 * `env`-mode arguments, then the context variables. Inherited context variables are removed
 * first, so a nested runtime never leaks the outer values.
 */
export function buildEnvironment(
  tool: PreparedTool,
  extra: Readonly<Record<string, string>> | undefined,
  context: RunContext | undefined,
  marker: readonly [string, string],
): Record<string, string> {
  // `??`: a tool a host built by hand, without a policy, inherits as before policies existed.
  const env = inherited(tool.environment ?? { inherit: 'all' })
  for (const [, name] of CONTEXT) delete env[name]
  if (tool.account !== undefined) Object.assign(env, identityOf(tool.account))
  if (tool.envdir !== undefined) {
    const { set, unset } = readEnvdir(tool.envdir)
    for (const name of unset) delete env[name]
    Object.assign(env, set)
  }
  Object.assign(env, tool.runtime.environment, extra)
  for (const [key, name] of CONTEXT) {
    const value = context?.[key]
    if (value !== undefined) env[name] = value
    else delete env[name]
  }
  env[marker[0]] = marker[1]
  return env
}

function identityOf(account: Account): Record<string, string> {
  return { HOME: account.home, USER: account.name, LOGNAME: account.name }
}

/** An environment as the NUL-separated `NAME=VALUE` block `toolvisor-exec --env-fd` reads. */
export function environmentBlock(env: Readonly<Record<string, string>>): Uint8Array {
  let text = ''
  for (const [name, value] of Object.entries(env)) {
    // A name with `=` or NUL, or a value with NUL, cannot be an environment entry: leave it out.
    if (name.length === 0 || name.includes('=') || name.includes('\0') || value.includes('\0')) continue
    text += `${name}=${value}\0`
  }
  return Buffer.from(text, 'utf8')
}
