import { existsSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import type { EntryOptions, LoadedTool, LoadReport, Tool, ToolboxEntry } from '@toolvisor/toolbox'
import { toolboxFiles } from '@toolvisor/toolbox'
import { CliError } from '../errors.js'
import type { Composed } from './compose.js'

/** The directory of a toolbox entry. */
function pathOf(entry: ToolboxEntry): string {
  return typeof entry === 'string' ? entry : entry.path
}

/**
 * Checks each toolbox before anything is served, synchronously: it must be a readable directory
 * holding at least one candidate tool (an executable file directly inside it) unless `allowEmpty`.
 * Throws a CliError (exit 2) naming the directory and the reason; a client that started
 * `toolvisor mcp` then shows the server failing, with this line in its log, instead of "no tools".
 */
export function checkToolboxes(toolboxes: readonly ToolboxEntry[], allowEmpty: boolean): void {
  for (const entry of toolboxes) {
    const dir = pathOf(entry)
    let listed: ReturnType<typeof toolboxFiles>
    try {
      listed = toolboxFiles(dir)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const why =
        code === 'ENOENT'
          ? 'no such directory'
          : code === 'ENOTDIR'
            ? 'not a directory (a toolbox is a directory of tools; to run one tool, use toolvisor call PATH)'
            : `cannot be read (${code ?? (error as Error).message})`
      throw new CliError('CLI_ERR_TOOLBOX', `toolbox ${dir}: ${why}`)
    }
    if (listed.tools.length > 0 || allowEmpty) continue
    const skipped =
      listed.skipped.length === 0
        ? 'it is empty'
        : `not tools: ${listed.skipped.map((path) => basename(path)).join(', ')} (no execute bit, or an editor backup)`
    throw new CliError(
      'CLI_ERR_TOOLBOX',
      `toolbox ${dir}: holds no tool (a tool is an executable file directly inside it; ${skipped}); pass --allow-empty to serve it anyway`,
    )
  }
}

/**
 * What the operator set for the toolbox a tool file lies directly in (the first configured entry
 * of that directory): a tool called or described by its path runs as it would be served. None
 * when the file is in no configured toolbox.
 */
export function entryOf(toolboxes: readonly ToolboxEntry[], path: string): EntryOptions | undefined {
  const dir = dirname(resolve(path))
  const entry = toolboxes.find((each) => resolve(pathOf(each)) === dir)
  return entry === undefined || typeof entry === 'string' ? undefined : entry
}

/** Whether the TOOL argument of `call` names a file (a path) rather than a tool in the toolboxes. */
export function isToolPath(tool: string): boolean {
  return tool.includes('/') || existsSync(tool)
}

/** The tool a name picks, with what loaded it. */
export interface FoundTool {
  readonly loaded: LoadedTool
  /** The one model-facing tool the name picks (a command's own name), when it picks one. */
  readonly tool?: Tool
}

/**
 * Finds a tool of the toolboxes by name: a model-facing name (`echo_args`, `git_lite.log` or its
 * provider form `git_lite__log`) or the tool's file name (`echo-args`). Loads every tool of the
 * toolboxes (their `describe`), as `mcp` would. Throws a CliError listing the names there are, and
 * the tools that failed to load, when none matches.
 */
export async function findTool(
  composed: Composed,
  toolboxes: readonly ToolboxEntry[],
  name: string,
): Promise<FoundTool> {
  const { loaded, reports } = await composed.binary.loadToolboxes(toolboxes)
  const named = loaded.flatMap((one) => composed.binary.tools(one).map((tool) => ({ one, tool })))
  const byName = named.find(({ tool }) => tool.name === name || tool.name.replaceAll('.', '__') === name)
  if (byName !== undefined) {
    const single = composed.binary.tools(byName.one).length === 1 && byName.tool.name === byName.one.spec.slug
    return single ? { loaded: byName.one } : { loaded: byName.one, tool: byName.tool }
  }
  const byFile = loaded.find((one) => basename(one.spec.path) === name || one.spec.slug === name)
  if (byFile !== undefined) return { loaded: byFile }
  throw new CliError('CLI_ERR_TOOLBOX', notFound(name, toolboxes, named, reports))
}

/** Why no tool of the toolboxes is called `name`: the names there are, and the tools that did not load. */
function notFound(
  name: string,
  toolboxes: readonly ToolboxEntry[],
  named: ReadonlyArray<{ tool: Tool }>,
  reports: readonly LoadReport[],
): string {
  const dirs = toolboxes.map(pathOf).join(', ')
  const names = named.map(({ tool }) => tool.name.replaceAll('.', '__'))
  const there = names.length > 0 ? `; the tools there: ${names.join(', ')}` : '; no tool there loaded'
  const failed = reports.filter((report) => report.severity === 'error')
  const broken =
    failed.length > 0 ? `; ${failed.length} failed to load: ${failed.map((r) => r.message).join('; ')}` : ''
  return `no tool named "${name}" in ${dirs}${there}${broken} (a path to the tool's file works too)`
}
