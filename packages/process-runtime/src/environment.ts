import { readEnvdir } from './envdir.js'
import type { PreparedTool, RunContext } from './types.js'

/** The context variables (protocol §1); set last so a tool cannot spoof them (ruling 3). */
const CONTEXT: ReadonlyArray<readonly [keyof RunContext, string]> = [
  ['sessionId', 'AGENT_SESSION_ID'],
  ['turnId', 'AGENT_TURN_ID'],
  ['conversationId', 'AGENT_CONVERSATION_ID'],
  ['agentId', 'AGENT_AGENT_ID'],
]

/**
 * The environment of one start, in the order of ruling 3: the runtime's own environment, the
 * envdir (read now, at every start), `environment`, the `env`-mode arguments, then the context
 * variables. Inherited context variables are removed first, so a nested runtime never leaks the
 * outer values.
 */
export function buildEnvironment(
  tool: PreparedTool,
  extra: Readonly<Record<string, string>> | undefined,
  context: RunContext | undefined,
  marker: readonly [string, string],
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
  for (const [, name] of CONTEXT) delete env[name]
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
