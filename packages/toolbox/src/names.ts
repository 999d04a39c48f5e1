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
