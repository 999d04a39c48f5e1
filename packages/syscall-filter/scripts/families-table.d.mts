import type { Family } from '../src/families.js'

/** The table's rows, as cells: family, rule, why. */
export function familyRows(
  families: readonly Family[],
  argumentRules: Readonly<Record<string, string>>,
): string[][]
/** One line per family: its name, then its calls. */
export function callLines(families: readonly Family[]): string[]
