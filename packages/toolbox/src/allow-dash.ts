/**
 * The operator's `allowDash` on a toolbox entry (decision 0099): applied to each tool as it loads,
 * and a warning for each name of it that reaches nothing.
 */
import { resolve } from 'node:path'
import { allowDashFor, type ToolSpec } from '@toolvisor/describe-v2'
import type { LoadedTool } from './binary-tool.js'
import { ToolboxWarningCodes } from './errors.js'
import type { EntryOptions, ToolboxEntry } from './loader.js'
import type { LoadReport } from './types.js'

/**
 * Which arguments may take a value that starts with `-` (decision 0099): `true` for every
 * argument of every tool, or by tool slug `true` for all its arguments or the names of some.
 */
export type AllowDash = true | Readonly<Record<string, true | readonly string[]>>

/**
 * `spec` under the entry's `allowDash` (decision 0099): the arguments it reached, and its load
 * warnings joined by the override's own (a name the tool does not declare, or that takes no dash).
 */
export function overridden(
  spec: ToolSpec,
  allow: AllowDash | undefined,
): { spec: ToolSpec; allowDash: readonly string[] } {
  const names = allow === true ? true : allow?.[spec.slug]
  if (names === undefined) return { spec, allowDash: [] }
  const outcome = allowDashFor(spec, names)
  const none =
    allow !== true && outcome.allowed.length === 0 && outcome.warnings.length === 0
      ? ['allowDash changes nothing: no positional or dashdashspace string argument lacks allow_dash']
      : []
  const warnings = [...spec.warnings, ...outcome.warnings, ...none]
  return { spec: { ...outcome.spec, warnings }, allowDash: outcome.allowed }
}

/**
 * A warning for each slug an entry's `allowDash` names that no tool loaded from that toolbox has:
 * a typo there would otherwise leave the refusal in place without a word.
 */
export function strayAllowDash(
  dirs: readonly ToolboxEntry[],
  found: ReadonlyArray<{ path: string; entry: EntryOptions }>,
  results: ReadonlyArray<LoadedTool | undefined>,
): LoadReport[] {
  const reports: LoadReport[] = []
  for (const dir of dirs) {
    if (typeof dir === 'string' || dir.allowDash === undefined || dir.allowDash === true) continue
    const have = new Set(
      results.flatMap((tool, index) =>
        tool !== undefined && found[index]?.entry === dir ? [tool.spec.slug] : [],
      ),
    )
    const absolute = resolve(dir.path)
    for (const slug of Object.keys(dir.allowDash)) {
      if (have.has(slug)) continue
      const tools = [...have].join(', ') || 'none'
      reports.push({
        severity: 'warning',
        tool: absolute,
        code: ToolboxWarningCodes.DESCRIBE,
        message: `${absolute}: allowDash names the tool "${slug}", which this toolbox does not load (its tools: ${tools})`,
      })
    }
  }
  return reports
}
