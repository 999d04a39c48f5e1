import { basename } from 'node:path'
import {
  type CapabilityReport,
  CheckCache,
  type CheckResult,
  cachedCheck,
  cacheFileIn,
  loadFailureStatus,
  resolveCapability,
  unknownOverrides,
  whyNoBackend,
} from '@toolvisor/capability-backends'
import { LoadingError } from '@toolvisor/describe-v2'
import { CORE_VARIABLES, DEFAULT_EXCLUDES, type LaunchFacts } from '@toolvisor/process-runtime'
import { compose } from '../compose.js'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import type { Io } from '../output.js'

export const CHECK_USAGE = `usage: toolvisor check [--config FILE] [--toolbox DIR ...] [--probe] [--json] [flags]

Loads the configuration: every toolbox, every capability and its backends. Then, for each tool
that declares check, runs TOOL check exactly as the tool would run (run_as, sandbox, envdir; 10 s
bound) and reports ok, failed (with detail and fix), unverified (no check declared) or skipped
(the sandbox mechanism cannot honour a declared field). Results are cached for a TTL (10 min);
--probe runs every probe afresh. Per capability, the active backend is the first ok, else the
first unverified.

Exit 0 when the configuration loads, 1 when it does not (every error listed); with --probe, 2
when it loads but a required capability has no active backend.

  --probe              run every probe now, ignoring cached results
  --json               print one JSON document
${RUNTIME_FLAGS_HELP}`

/** One tool of the toolboxes in the report. */
interface ToolReport {
  readonly tool: string
  readonly path: string
  readonly status: CheckResult['status']
  readonly ms?: number
  readonly mechanism?: string
  readonly gaps?: readonly string[]
  /** Who it runs as when that is not toolvisor's own user (run_as, or the sandbox user). */
  readonly user?: string
  /** Which of toolvisor's variables it inherits (all, core, none). */
  readonly inherit?: string
  readonly detail?: string
  readonly fix?: string
}

/** `toolvisor check`. */
export async function checkCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parse(
    argv,
    { ...RUNTIME_FLAGS, probe: { type: 'boolean' }, json: { type: 'boolean' } },
    CHECK_USAGE,
  )
  if (values.help) {
    io.out(`${CHECK_USAGE}\n`)
    return 0
  }
  let config: Config
  try {
    config = configFrom(values)
  } catch (error) {
    if (CliError.is(error) && error.code === 'CLI_ERR_CONFIG') {
      io.err(`toolvisor check: the configuration does not load:\n  ${error.message}\n`)
      return 1
    }
    throw error
  }
  const probe = values.probe === true
  const composed = await compose(config, { loadToolboxes: false })
  try {
    const errors: string[] = []
    const warnings: string[] = []
    const cache = new CheckCache({
      file: cacheFileIn(composed.runtime.options.stateDir),
      ttlMs: config.checkTtlMs ?? 10 * 60 * 1000,
    })
    const outcome = await composed.binary.loadToolboxes(config.toolboxes)
    const tools: ToolReport[] = []
    for (const report of outcome.reports) {
      if (report.severity === 'warning') {
        warnings.push(report.message)
        continue
      }
      const status = loadFailureStatus(report.code)
      // A field the sandbox mechanism cannot honour is "skipped", not a broken configuration.
      if (status === 'failed') errors.push(report.message)
      tools.push({ tool: basename(report.tool), path: report.tool, status, detail: report.message })
    }
    for (const loaded of outcome.loaded) {
      const result = await cachedCheck(composed.binary, loaded, cache, {
        probe,
        timeoutMs: config.checkTimeoutMs,
      })
      const sandbox = loaded.prepared.sandbox
      const described = sandbox ? await sandbox.mechanism.describe() : undefined
      tools.push({
        tool: loaded.spec.slug,
        path: loaded.spec.path,
        status: result.status,
        ...(result.ms !== undefined ? { ms: result.ms } : {}),
        ...(sandbox ? { mechanism: sandbox.mechanism.name } : {}),
        ...(described && described.gaps.length > 0 ? { gaps: described.gaps } : {}),
        ...(loaded.prepared.account ? { user: loaded.prepared.account.name } : {}),
        inherit: loaded.prepared.environment.inherit,
        ...(result.detail !== undefined ? { detail: result.detail } : {}),
        ...(result.fix !== undefined ? { fix: result.fix } : {}),
      })
    }
    const capabilities: CapabilityReport[] = []
    warnings.push(...unknownOverrides(config.capabilities, config.backends))
    for (const capability of config.capabilities) {
      try {
        const override = config.backends[capability.capability]
        const resolved = await resolveCapability(capability, {
          binary: composed.binary,
          cache,
          probe,
          ...(config.checkTimeoutMs !== undefined ? { timeoutMs: config.checkTimeoutMs } : {}),
          warn: (message) => warnings.push(message),
          ...(override !== undefined ? { override } : {}),
        })
        capabilities.push(resolved.report)
        if (resolved.report.active === null) {
          const consequence = capability.required
            ? 'it is required: toolvisor mcp refuses to start'
            : 'it is optional and left out'
          warnings.push(`${whyNoBackend(resolved.report)}; ${consequence}`)
        }
      } catch (error) {
        if (!LoadingError.is(error)) throw error
        errors.push(error.message)
      }
    }
    const missing = capabilities.filter((c) => c.required && c.active === null)
    const facts = composed.runtime.launchFacts()
    if (!facts.execHelper.available) {
      warnings.push(
        `${facts.execHelper.reason}: descriptors toolvisor inherited reach unsandboxed tools, and sandboxed and run_as tools do not load (fix: ${facts.execHelper.fix})`,
      )
    }
    const runtime = runtimeReport(facts, config)
    if (values.json) {
      io.out(
        `${JSON.stringify(
          {
            capabilities: capabilities.map((c) => ({
              capability: c.capability,
              active: c.active,
              backends: c.backends.map(({ path: _path, ...backend }) => backend),
            })),
            tools: tools.map(({ path: _path, ...tool }) => tool),
            runtime,
            ...(errors.length > 0 ? { errors } : {}),
            ...(warnings.length > 0 ? { warnings } : {}),
          },
          null,
          2,
        )}\n`,
      )
    } else {
      io.out(table(capabilities, tools, errors, warnings) + runtimeLines(runtime))
    }
    if (errors.length > 0) return 1
    if (probe && missing.length > 0) return 2
    return 0
  } finally {
    await composed.kernel.dispose()
  }
}

/** How tools are started here: for operators, what `check --probe` prints last. */
function runtimeReport(facts: LaunchFacts, config: Config) {
  return {
    sandbox: config.sandbox ?? null,
    execHelper: facts.execHelper.available
      ? { available: true, path: facts.execHelper.path }
      : { available: false, reason: facts.execHelper.reason, fix: facts.execHelper.fix },
    ...(facts.root ? { sandboxUser: facts.sandboxUser } : {}),
    environment: {
      inherit: facts.environment.inherit ?? 'core for sandboxed tools, all for the others',
      excludes: [
        ...(facts.environment.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES),
        ...(facts.environment.exclude ?? []),
      ],
      ...(facts.environment.includeOnly ? { includeOnly: facts.environment.includeOnly } : {}),
      ...(facts.environment.set ? { set: Object.keys(facts.environment.set) } : {}),
      core: CORE_VARIABLES,
    },
  }
}

function runtimeLines(runtime: ReturnType<typeof runtimeReport>): string {
  const helper = runtime.execHelper.available
    ? `toolvisor-exec (${runtime.execHelper.path}): every tool starts with only its own environment and descriptors 0-2`
    : `toolvisor-exec missing: ${runtime.execHelper.reason}`
  const lines = [
    'runtime',
    `  sandbox: ${runtime.sandbox ?? 'none configured'}`,
    `  final exec: ${helper}`,
    ...(runtime.sandboxUser !== undefined
      ? [`  sandbox user: ${runtime.sandboxUser} (sandboxed tools that declare no run_as run as it)`]
      : []),
    `  environment: inherit ${runtime.environment.inherit}; never ${runtime.environment.excludes.join(', ')}` +
      `${runtime.environment.includeOnly ? `; only ${runtime.environment.includeOnly.join(', ')}` : ''}` +
      `${runtime.environment.set ? `; set ${runtime.environment.set.join(', ')}` : ''}` +
      `; core is ${runtime.environment.core.join(', ')}`,
  ]
  return `${lines.join('\n')}\n`
}

function table(
  capabilities: CapabilityReport[],
  tools: ToolReport[],
  errors: string[],
  warnings: string[],
): string {
  const lines: string[] = []
  const row = (name: string, status: string, ms: number | undefined, rest: string) =>
    `    ${name.padEnd(20)} ${status.padEnd(11)} ${ms === undefined ? '' : `${ms} ms`.padStart(8)}  ${rest}`.trimEnd()
  const explain = (detail?: string, fix?: string) =>
    [detail, fix ? `fix: ${fix}` : undefined].filter(Boolean).join('; ')
  if (capabilities.length > 0) {
    lines.push('capabilities')
    for (const c of capabilities) {
      lines.push(
        `  ${c.capability}${c.required ? ' (required)' : ''}: ${c.active === null ? 'NO ACTIVE BACKEND' : `active ${c.active}`}`,
      )
      for (const b of c.backends) lines.push(row(b.name, b.status, b.ms, explain(b.detail, b.fix)))
    }
  }
  if (tools.length > 0) {
    lines.push('tools')
    for (const t of tools) {
      const sandbox = t.mechanism
        ? `sandbox ${t.mechanism}${t.gaps ? ` (gaps: ${t.gaps.join('; ')})` : ''}`
        : ''
      const how = [t.user ? `as ${t.user}` : '', t.inherit ? `env ${t.inherit}` : '']
        .filter(Boolean)
        .join(', ')
      lines.push(
        row(t.tool, t.status, t.ms, [how, sandbox, explain(t.detail, t.fix)].filter(Boolean).join('; ')),
      )
    }
  }
  if (errors.length > 0) lines.push('errors', ...errors.map((e) => `  ${e}`))
  if (warnings.length > 0) lines.push('warnings', ...warnings.map((w) => `  ${w}`))
  if (lines.length === 0) lines.push('nothing configured: pass --toolbox DIR or --config FILE')
  return `${lines.join('\n')}\n`
}
