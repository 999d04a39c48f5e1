import { createHash } from 'node:crypto'
import {
  accessSync,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { LoadingError } from '@toolvisor/describe-v2'
import { type EnvironmentPolicy, RAW_ONESHOT } from '@toolvisor/process-runtime'
import { type AllowDash, overridden, strayAllowDash } from './allow-dash.js'
import type { BinaryToolDeps, LoadedTool } from './binary-tool.js'
import { type ToolboxErrorCode, ToolboxErrorCodes, ToolboxWarningCodes } from './errors.js'
import type { LoadReport } from './types.js'

/** How tools are loaded. */
export interface LoadOptions {
  /** How long `describe` may take (ruling 5). */
  readonly describeTimeoutMs: number
  /** How many `describe` runs at once. */
  readonly describeConcurrency: number
}

/**
 * A toolbox: its directory, or its directory with the environment policy of its tools, the
 * tools whose terminal control codes reach the model raw (`true`: all of them; default: none),
 * and the arguments whose values may start with `-` (default: none but what a tool declares).
 */
export type ToolboxEntry =
  | string
  | {
      readonly path: string
      readonly environment?: EnvironmentPolicy | undefined
      readonly keepControls?: true | readonly string[] | undefined
      readonly allowDash?: AllowDash | undefined
    }

/** What the operator set for the tools of one toolbox. */
export interface EntryOptions {
  readonly environment?: EnvironmentPolicy | undefined
  /** Keep this tool's control codes raw (decided per slug from the entry's `keepControls`). */
  readonly keepControls?: true | readonly string[] | undefined
  /** Arguments that take a leading `-` (decided per slug from the entry's `allowDash`). */
  readonly allowDash?: AllowDash | undefined
}

/** What loading toolboxes gave: the tools, a report for every failure and warning, and what is not a tool. */
export interface LoadOutcome {
  readonly loaded: readonly LoadedTool[]
  readonly reports: readonly LoadReport[]
  /** Files in a toolbox without any execute bit (a README): not tools, not failures (decision 0012). */
  readonly skipped: readonly string[]
}

/** A LoadingError (or anything thrown while loading) as a report line. */
export function reportOf(
  tool: string,
  error: unknown,
  severity: LoadReport['severity'] = 'error',
): LoadReport {
  if (LoadingError.is(error)) {
    return {
      severity,
      tool: error.tool,
      message: error.message,
      code: error.code,
      ...(error.field ? { field: error.field } : {}),
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return {
    severity,
    tool,
    message: `${tool}: ${message}`,
    code: (error as { code?: string }).code ?? ToolboxErrorCodes.DESCRIBE_FAILED,
  }
}

/**
 * The file a tool path names: a symlink is followed to its real file, whose directory is the
 * tool's (rundir and relative sandbox paths are resolved there, decision 0012). Throws a
 * LoadingError for a missing, dangling, irregular or non-executable path.
 */
function realTool(path: string): string {
  const fail = (code: ToolboxErrorCode, reason: string): never => {
    throw new LoadingError(code, { tool: path, reason })
  }
  let real: string
  try {
    real = realpathSync(path)
  } catch {
    let link = false
    try {
      link = lstatSync(path).isSymbolicLink()
    } catch {}
    return fail(
      ToolboxErrorCodes.NOT_EXECUTABLE,
      link ? 'a symlink to a file that does not exist' : 'no such file',
    )
  }
  if (!statSync(real).isFile()) fail(ToolboxErrorCodes.NOT_EXECUTABLE, 'not a regular file')
  try {
    accessSync(real, constants.X_OK)
  } catch {
    fail(ToolboxErrorCodes.NOT_EXECUTABLE, 'not executable: chmod +x it, or move it out of the toolbox')
  }
  const crlf = crlfShebang(real)
  if (crlf !== undefined) fail(ToolboxErrorCodes.NOT_EXECUTABLE, crlf)
  return real
}

/**
 * Why a script with Windows (CRLF) line endings cannot start, or `undefined`. Its first line names
 * an interpreter (or its argument) ending in a carriage return (`/bin/sh\r`), which the kernel
 * cannot find: without this, the failure reads `spawn ... ENOENT`, naming a file that plainly exists.
 */
function crlfShebang(path: string): string | undefined {
  const head = Buffer.alloc(256)
  let length = 0
  try {
    const fd = openSync(path, 'r')
    try {
      length = readSync(fd, head, 0, head.length, 0)
    } finally {
      closeSync(fd)
    }
  } catch {
    return undefined // unreadable: describe reports it
  }
  const text = head.subarray(0, length).toString('latin1')
  if (!text.startsWith('#!')) return undefined
  const end = text.indexOf('\n')
  const line = end === -1 ? text : text.slice(0, end)
  if (!line.endsWith('\r')) return undefined
  const shown = line.slice(0, -1).slice(0, 80)
  return (
    `has Windows (CRLF) line endings: its first line "${shown}\\r" names a program that ends in a carriage return, ` +
    `which does not exist; convert the file to LF endings (sed -i 's/\\r$//' FILE, or dos2unix FILE)`
  )
}

/**
 * Loads one tool: runs `TOOL describe` (argv exactly that, stdin closed, bounded by a timeout),
 * parses what it printed, and checks its runtime declarations against the operator's
 * configuration. Throws a LoadingError naming the path and the reason.
 */
export async function loadTool(
  path: string,
  deps: BinaryToolDeps,
  options: LoadOptions,
  entry: EntryOptions = {},
): Promise<LoadedTool> {
  const real = realTool(resolve(path))
  const fail = (reason: string): never => {
    throw new LoadingError(ToolboxErrorCodes.DESCRIBE_FAILED, { tool: real, reason })
  }
  // describe runs before anything is declared: confined when a sandbox mechanism is configured.
  const confined = await deps.runtime.confined(real)
  const process = deps.runtime.start({
    tool: confined,
    argv: ['describe'],
    process: RAW_ONESHOT,
    timeoutMs: options.describeTimeoutMs,
  })
  const exit = await process.exit
  const stderr = process.output.stderr().tail.toString('utf8').trim()
  const said = stderr.length > 0 ? `: ${stderr.slice(-500)}` : ''
  if (exit.status === 'failed') fail(`describe could not run: ${exit.why}`)
  if (exit.reason === 'timeout') fail(`describe did not answer within ${options.describeTimeoutMs / 1000} s`)
  if (exit.code !== 0) {
    const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`
    fail(`describe ${how}${said}`)
  }
  const stdout = process.output.stdout()
  if (stdout.truncated)
    fail(`describe printed ${stdout.totalBytes} bytes, more than a describe document may hold`)
  const { spec, allowDash } = overridden(deps.describe.parse(stdout.head, real), entry.allowDash)
  const prepared = await deps.runtime.prepare({
    ...spec,
    path: real,
    dir: dirname(real),
    ...(entry.environment === undefined ? {} : { environment: entry.environment }),
  })
  const keep = entry.keepControls
  return {
    spec,
    prepared,
    confined,
    describeHash: createHash('sha256').update(stdout.head).digest('hex'),
    keepControls: keep === true || (keep?.includes(spec.slug) ?? false),
    allowDash,
  }
}

/**
 * Editor leftovers, never tools even when executable (a backup keeps the execute bit): `name~`,
 * vim's `name.swp`/`.swo`/`.swx`, emacs's `#name#`, `name.bak`, `name.orig` (decision 0040).
 */
const EDITOR_BACKUP = /(~|\.sw[a-p]|\.swx|\.bak|\.orig)$|^#.*#$/

/**
 * The candidate tools of a toolbox: every entry directly inside it except dot-files, directories,
 * editor backups and files without any execute bit (those two are listed as skipped). Throws the
 * file system's error (`ENOENT`, `ENOTDIR`, `EACCES`) when the directory cannot be read.
 */
export function toolboxFiles(dir: string): { tools: string[]; skipped: string[] } {
  const tools: string[] = []
  const skipped: string[] = []
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.')) continue
    const path = join(dir, name)
    if (EDITOR_BACKUP.test(name)) {
      skipped.push(path)
      continue
    }
    let stat: ReturnType<typeof statSync> | undefined
    try {
      stat = statSync(path)
    } catch {
      stat = undefined // a dangling symlink: reported by loadTool
    }
    if (stat?.isDirectory()) continue
    if (stat?.isFile() && (stat.mode & 0o111) === 0) skipped.push(path)
    else tools.push(path)
  }
  return { tools, skipped }
}

/**
 * Loads every tool of every toolbox, `describe` running in parallel with a cap. One bad tool never
 * stops the others: each failure becomes a report with its path and reason.
 */
export async function loadToolboxes(
  dirs: readonly ToolboxEntry[],
  deps: BinaryToolDeps,
  options: LoadOptions,
): Promise<LoadOutcome> {
  const reports: LoadReport[] = []
  const found: Array<{ path: string; entry: EntryOptions }> = []
  const skipped: string[] = []
  for (const dir of dirs) {
    const entry = typeof dir === 'string' ? { path: dir } : dir
    const absolute = resolve(entry.path)
    try {
      const listed = toolboxFiles(absolute)
      for (const path of listed.tools) found.push({ path, entry })
      skipped.push(...listed.skipped)
    } catch (error) {
      reports.push({
        severity: 'error',
        tool: absolute,
        code: ToolboxErrorCodes.TOOLBOX_UNREADABLE,
        message: `${absolute}: cannot read the toolbox: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      })
    }
  }
  const results: Array<LoadedTool | undefined> = new Array(found.length)
  let next = 0
  const worker = async () => {
    while (next < found.length) {
      const index = next++
      const { path, entry } = found[index]!
      try {
        results[index] = await loadTool(path, deps, options, entry)
      } catch (error) {
        reports.push(reportOf(path, error))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.describeConcurrency, found.length) }, worker))
  const loaded = results.filter((tool): tool is LoadedTool => tool !== undefined)
  reports.push(...strayAllowDash(dirs, found, results))
  for (const tool of loaded) {
    for (const warning of tool.spec.warnings) {
      reports.push({
        severity: 'warning',
        tool: tool.spec.path,
        code: ToolboxWarningCodes.DESCRIBE,
        message: `${tool.spec.path}: ${warning}`,
      })
    }
  }
  return { loaded, reports, skipped }
}
