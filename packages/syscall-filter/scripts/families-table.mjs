// Prints the reviewed families as the README (and docs/security.md) show them: a table family |
// rule | why, then each family's calls. The README test checks the README holds exactly these
// (table cells compared trimmed: the formatter pads them).
// Usage (after a build): node scripts/families-table.mjs
import { fileURLToPath } from 'node:url'

const RULES = {
  allow: 'allowed',
  eperm: 'EPERM',
  enosys: 'ENOSYS',
  ipc: "allowed in its own IPC namespace (bwrap, `ipc: namespaced`); EPERM on the host's (Landlock, `ipc: host`)",
}

const cell = (text) => text.replaceAll('|', '\\|')

/** The table's rows, as cells: family, rule, why. */
export function familyRows(families, argumentRules) {
  return families.map((family) =>
    [family.name, RULES[family.rule] ?? argumentRules[family.rule], family.why].map(cell),
  )
}

/** One line per family: its name, then its calls. */
export function callLines(families) {
  return families.map(
    (family) => `- **${family.name}**: ${family.calls.map((call) => `\`${call}\``).join(' ')}`,
  )
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ARGUMENT_RULES, SYSCALL_FAMILIES } = await import('../dist/index.js')
  const rows = familyRows(SYSCALL_FAMILIES, ARGUMENT_RULES).map((cells) => `| ${cells.join(' | ')} |`)
  const lines = [
    '| family | rule | why |',
    '| --- | --- | --- |',
    ...rows,
    '',
    ...callLines(SYSCALL_FAMILIES),
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}
