/** The longest label shown; a longer command line ends in `…`. */
const MAX_LABEL = 200

/**
 * A process's command line for people (`TaskInfo.label`, shown by the operator page): its
 * arguments as a shell would need them (`--file '/var/log/my app.log'`), at most 200 characters.
 * Which file a `log_watcher` p2 follows is then read off its row.
 */
export function argvLabel(argv: readonly string[]): string {
  const quoted = argv.map((arg) => (/^[\w./:=@%+,-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`))
  const line = quoted.join(' ')
  return line.length > MAX_LABEL ? `${line.slice(0, MAX_LABEL - 1)}…` : line
}
