import { accessSync, constants, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { LoadingError } from '@toolvisor/describe-v2'
import { type EnvironmentPolicy, RAW_ONESHOT } from '@toolvisor/process-runtime'
import type { BinaryToolDeps, LoadedTool } from './binary-tool.js'
import type { ToolboxErrorCode } from './errors.js'
import type { LoadReport } from './types.js'

/** How tools are loaded. */
export interface LoadOptions {
  /** How long `describe` may take (ruling 5). */
  readonly describeTimeoutMs: number
  /** How many `describe` runs at once. */
  readonly describeConcurrency: number
}

/** A toolbox: its directory, or its directory and the environment policy of its tools. */
export type ToolboxEntry =
  | string
  | { readonly path: string; readonly environment?: EnvironmentPolicy | undefined }

/** What loading toolboxes gave: the tools, and a report for every failure and warning. */
export interface LoadOutcome {
  readonly loaded: readonly LoadedTool[]
  readonly reports: readonly LoadReport[]
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
    code: (error as { code?: string }).code ?? 'TOOLBOX_ERR_DESCRIBE_FAILED',
  }
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
  environment?: EnvironmentPolicy | undefined,
): Promise<LoadedTool> {
  const absolute = resolve(path)
  const fail = (code: ToolboxErrorCode, reason: string): never => {
    throw new LoadingError(code, { tool: absolute, reason })
  }
  let stat: ReturnType<typeof statSync>
  try {
    stat = statSync(absolute)
  } catch {
    return fail('TOOLBOX_ERR_DESCRIBE_FAILED', 'no such file')
  }
  if (!stat.isFile()) fail('TOOLBOX_ERR_DESCRIBE_FAILED', 'not a regular file')
  try {
    accessSync(absolute, constants.X_OK)
  } catch {
    fail('TOOLBOX_ERR_NOT_EXECUTABLE', 'not executable: chmod +x it, or move it out of the toolbox')
  }
  // describe runs before anything is declared: confined when a sandbox mechanism is configured.
  const confined = await deps.runtime.confined(absolute)
  const process = deps.runtime.start({
    tool: confined,
    argv: ['describe'],
    process: RAW_ONESHOT,
    timeoutMs: options.describeTimeoutMs,
  })
  const exit = await process.exit
  const stderr = process.stderr().tail.toString('utf8').trim()
  const said = stderr.length > 0 ? `: ${stderr.slice(-500)}` : ''
  if (exit.status === 'failed') fail('TOOLBOX_ERR_DESCRIBE_FAILED', `describe could not run: ${exit.why}`)
  if (exit.reason === 'timeout') {
    fail(
      'TOOLBOX_ERR_DESCRIBE_FAILED',
      `describe did not answer within ${options.describeTimeoutMs / 1000} s`,
    )
  }
  if (exit.code !== 0) {
    const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`
    fail('TOOLBOX_ERR_DESCRIBE_FAILED', `describe ${how}${said}`)
  }
  const stdout = process.stdout()
  if (stdout.truncated)
    fail(
      'TOOLBOX_ERR_DESCRIBE_FAILED',
      `describe printed ${stdout.totalBytes} bytes, more than a describe document may hold`,
    )
  const spec = deps.describe.parse(stdout.head, absolute)
  if (spec.process.mode === 'service') {
    throw new LoadingError('TOOLBOX_ERR_UNSUPPORTED_MODE', {
      tool: absolute,
      field: '$.process.mode',
      reason: 'service tools are run by @toolvisor/tool-processes, which this toolvisor does not include yet',
    })
  }
  const prepared = await deps.runtime.prepare({
    ...spec,
    path: absolute,
    ...(environment === undefined ? {} : { environment }),
  })
  return { spec, prepared, confined }
}

/** The candidate tools of a toolbox: every entry directly inside it except dot-files and directories. */
function candidates(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => !name.startsWith('.'))
    .sort()
    .map((name) => join(dir, name))
    .filter((path) => {
      try {
        return !statSync(path).isDirectory()
      } catch {
        return true // a dangling symlink: reported by loadTool
      }
    })
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
  const paths: string[] = []
  const policies = new Map<string, EnvironmentPolicy>()
  for (const entry of dirs) {
    const absolute = resolve(typeof entry === 'string' ? entry : entry.path)
    try {
      const found = candidates(absolute)
      paths.push(...found)
      if (typeof entry !== 'string' && entry.environment !== undefined) {
        for (const path of found) policies.set(path, entry.environment)
      }
    } catch (error) {
      reports.push({
        severity: 'error',
        tool: absolute,
        code: 'TOOLBOX_ERR_TOOLBOX_UNREADABLE',
        message: `${absolute}: cannot read the toolbox: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      })
    }
  }
  const results: Array<LoadedTool | undefined> = new Array(paths.length)
  let next = 0
  const worker = async () => {
    while (next < paths.length) {
      const index = next++
      const path = paths[index]!
      try {
        results[index] = await loadTool(path, deps, options, policies.get(path))
      } catch (error) {
        reports.push(reportOf(path, error))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.describeConcurrency, paths.length) }, worker))
  const loaded = results.filter((tool): tool is LoadedTool => tool !== undefined)
  for (const tool of loaded) {
    for (const warning of tool.spec.warnings) {
      reports.push({
        severity: 'warning',
        tool: tool.spec.path,
        code: 'DESCRIBE_WARNING',
        message: `${tool.spec.path}: ${warning}`,
      })
    }
  }
  return { loaded, reports }
}
