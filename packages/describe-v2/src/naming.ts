/**
 * The naming rules of describe documents. Provider-safe names (`.` mapped to `__`) belong to the
 * toolbox; these are the internal names and the rules that make that mapping safe.
 */

/** Longest slug or command name: a provider-safe tool name is at most 64 characters. */
export const MAX_NAME_LENGTH = 64

/**
 * What a slug or a command name may contain: letters, digits, `_` and `-`. `.` is left out on
 * purpose: it joins a slug and a command (`slug.command`), and maps to `__` for providers.
 */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/

/**
 * The internal name of a tool (`log_watcher`) or of one of its sub-commands or companions
 * (`log_watcher.send`), as ruling 6 defines it.
 *
 * @example
 * ```ts
 * internalName('git') // 'git'
 * internalName('git', 'log') // 'git.log'
 * ```
 */
export function internalName(slug: string, command?: string): string {
  return command === undefined ? slug : `${slug}.${command}`
}

/**
 * The environment variable an `env`-mode argument becomes: its name upper-cased, `-` turned
 * into `_` (`api-token` → `API_TOKEN`).
 */
export function envVariableName(argumentName: string): string {
  return argumentName.toUpperCase().replace(/-/g, '_')
}

/**
 * Why `name` cannot be an argument name, or `undefined` when it can. An argument name is used
 * verbatim as a flag (`--name`, `--name=value`) and, upper-cased, as an environment variable.
 */
export function argumentNameProblem(name: string): string | undefined {
  if (name.length === 0 || /[=\s\0]/u.test(name)) {
    return 'expected a non-empty name without "=", whitespace or NUL (it is used as --name and as an environment variable name)'
  }
  return undefined
}
