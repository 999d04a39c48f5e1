const safe = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The provider-safe form of an internal tool name (ruling 6): `.` becomes `__`
 * (`log_watcher.send` -> `log_watcher__send`). Returns `undefined` when the result still does not
 * match `^[a-zA-Z0-9_-]{1,64}$`.
 */
export function providerSafeName(name: string): string | undefined {
  const mapped = name.replaceAll('.', '__')
  return safe.test(mapped) ? mapped : undefined
}

/**
 * Names a toolbox tool cannot take, with what holds them: the shared tools every toolvisor serves
 * (`help` from this package, `processes` from `@toolvisor/tool-processes`, spec §2.4). They are
 * reserved whether or not the shared tool is served, so a toolbox means the same everywhere.
 */
export const RESERVED_NAMES: Readonly<Record<string, string>> = {
  help: "toolvisor's shared help tool",
  processes: "toolvisor's shared processes tool",
}
