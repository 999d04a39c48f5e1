import { basename } from 'node:path'
import {
  type CapabilityReport,
  CheckCache,
  type CheckResult,
  cachedCheck,
  cacheFileIn,
  loadFailureStatus,
  resolveCapability,
  serveCapability,
  unknownOverrides,
  whyNoBackend,
} from '@toolvisor/capability-backends'
import { LoadingError } from '@toolvisor/describe-v2'
import type { NetPolicy, NetworkRoute } from '@toolvisor/process-runtime'
import type { LoadedTool } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import { type Composed, compose } from '../internal/compose.js'
import { configFileOf, configOf, parseLine, usageOf } from '../internal/flags.js'
import { reapKept } from '../internal/reap-kept.js'
import { human, type Io } from '../output.js'
import { limitsReport } from './check-containment.js'
import { type CheckReport, printCheck, runtimeReport, type ToolReport } from './check-report.js'

/** `toolvisor check --help`. */
export const CHECK_USAGE = usageOf(
  'check',
  `usage: toolvisor check [--config FILE] [--toolbox DIR ...] [--probe] [--json] [flags]

Loads the configuration the way toolvisor mcp does (the same loading and registration): every
toolbox, every capability and its backends, and lists the tools mcp would serve. Then, for each
tool that declares check, runs TOOL check exactly as the tool would run (run_as, sandbox, envdir;
10 s bound) and reports ok, failed (with detail and fix), unverified (no check declared) or
skipped (the configured sandbox mechanism cannot honour a declared field). Results are cached
for a TTL (10 min) under everything that changes how the tool runs; --probe runs every probe
afresh. Per capability, the active backend is the first ok, else the first unverified.

Exit 0 when the configuration loads, 1 when it does not (every error listed: a configuration
file's with the JSON path and what was expected there); with --probe, 2
when it loads but a required capability has no active backend.`,
)

/** `toolvisor check`. */
export async function checkCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseLine('check', argv, CHECK_USAGE)
  if (values.help) {
    io.out(`${CHECK_USAGE}\n`)
    return 0
  }
  let config: Config
  try {
    config = configOf('check', values)
  } catch (error) {
    if (CliError.is(error) && error.code === 'CLI_ERR_CONFIG') {
      io.err(`toolvisor check: the configuration does not load:\n  ${human(error.message)}\n`)
      return 1
    }
    throw error
  }
  const probe = values.probe === true
  const composed = await compose(config, { loadToolboxes: false, configFile: configFileOf(values) })
  try {
    // Before the report: what it ends is no longer kept (decision 0113).
    if (probe && values.reap === true)
      for (const line of reapKept(composed.runtime.kept())) io.err(`${line}\n`)
    const report = await gather(composed, config, probe)
    printCheck(report, values.json === true, io)
    if (report.errors.length > 0) return 1
    if (probe && report.capabilities.some((c) => c.required && c.active === null)) return 2
    return 0
  } finally {
    await composed.kernel.dispose()
  }
}

/** What a check finds, loaded and registered exactly as `toolvisor mcp` would. */
async function gather(composed: Composed, config: Config, probe: boolean): Promise<CheckReport> {
  const errors: string[] = []
  const warnings: string[] = []
  const cache = new CheckCache({
    file: cacheFileIn(composed.runtime.options.stateDir),
    ttlMs: config.checkTtlMs ?? 10 * 60 * 1000,
  })
  const measure = (loaded: LoadedTool) =>
    cachedCheck(composed.binary, loaded, cache, { probe, timeoutMs: config.checkTimeoutMs })
  // The registry mcp would serve: the processes tool is in it already; toolboxes go in by `serve`.
  const outcome = await composed.binary.loadToolboxes(config.toolboxes)
  for (const report of outcome.reports) composed.tools.reportLoadError(report)
  const served = composed.binary.serve(composed.tools, outcome.loaded)
  served.close()
  const tools: ToolReport[] = []
  for (const report of composed.tools.loadErrors()) {
    if (report.severity === 'warning') {
      warnings.push(report.message)
      continue
    }
    const status = loadFailureStatus(report.code, composed.runtime.options.sandbox)
    // A field the configured sandbox mechanism cannot honour is "skipped", not a broken configuration.
    if (status === 'failed') errors.push(report.message)
    tools.push({ tool: basename(report.tool), path: report.tool, status, detail: report.message })
  }
  for (const loaded of served.served()) tools.push(await toolReport(loaded, await measure(loaded)))
  const capabilities = await capabilityReports(composed, config, { cache, probe, errors, warnings })
  const facts = composed.runtime.launchFacts()
  if (!facts.execHelper.available) {
    warnings.push(
      `${facts.execHelper.reason}: descriptors toolvisor inherited reach unsandboxed tools, and sandboxed and run_as tools do not load (fix: ${facts.execHelper.fix})`,
    )
  }
  const serves = composed.tools.list().map((tool) => composed.tools.safeName(tool.name))
  const runtime = runtimeReport(facts, config, composed.runtime.keptLost(), composed.runtime.kept())
  return { capabilities, tools, serves, notTools: outcome.skipped, errors, warnings, runtime }
}

/** A served tool in the report: its check result and how it runs. */
async function toolReport(loaded: LoadedTool, result: CheckResult): Promise<ToolReport> {
  const sandbox = loaded.prepared.sandbox
  const described = sandbox ? await sandbox.mechanism.describe() : undefined
  return {
    tool: loaded.spec.slug,
    path: loaded.spec.path,
    status: result.status,
    ...(result.ms !== undefined ? { ms: result.ms } : {}),
    ...(sandbox ? { mechanism: sandbox.mechanism.name } : {}),
    ...(described && described.gaps.length > 0 ? { gaps: described.gaps } : {}),
    ...(loaded.prepared.account ? { user: loaded.prepared.account.name } : {}),
    inherit: loaded.prepared.environment.inherit,
    ...(loaded.prepared.limits ? { limits: limitsReport(loaded.prepared.limits) } : {}),
    ...(sandbox ? { network: networkReport(sandbox.policy.net, sandbox.mechanism.netRoute) } : {}),
    ...dashReport(loaded),
    ...(result.detail !== undefined ? { detail: result.detail } : {}),
    ...(result.fix !== undefined ? { fix: result.fix } : {}),
  }
}

/** A sandboxed tool's network and how it is held to it (decision 0111). */
function networkReport(
  net: NetPolicy,
  route: NetworkRoute['kind'] | undefined,
): NonNullable<ToolReport['network']> {
  if (net === 'host' || net === 'none') return { net }
  const how =
    route === 'namespace'
      ? "a network namespace with only lo, 127.0.0.1:3128 bridged to toolvisor's proxy"
      : "TCP connect only to toolvisor's proxy's port on the host's loopback (Landlock), every other socket refused"
  return { net: 'allow list', allow: net.allow, deny: net.deny, publish: net.publish, enforcedBy: how }
}

/**
 * The arguments of a tool that take a leading `-`: each the tool declared `allow_dash` on, and
 * each the operator's `allowDash` reached (decision 0099); nothing when there are none.
 */
function dashReport(loaded: LoadedTool): Pick<ToolReport, 'allowDash'> {
  const { spec } = loaded
  const args = [
    ...spec.args.map((arg) => ({ arg, label: arg.name })),
    ...spec.commands.flatMap((command) =>
      command.args.map((arg) => ({ arg, label: `${command.name}.${arg.name}` })),
    ),
  ]
  const allowed = args
    .filter(({ arg }) => arg.allowDash === true)
    .map(({ label }) => ({
      argument: label,
      by: loaded.allowDash.includes(label) ? ('operator' as const) : ('tool' as const),
    }))
  return allowed.length > 0 ? { allowDash: allowed } : {}
}

/** Resolves and registers every capability as the capabilities plugin does, reporting instead of failing. */
async function capabilityReports(
  composed: Composed,
  config: Config,
  shared: { cache: CheckCache; probe: boolean; errors: string[]; warnings: string[] },
): Promise<CapabilityReport[]> {
  const { errors, warnings } = shared
  const capabilities: CapabilityReport[] = []
  warnings.push(...unknownOverrides(config.capabilities, config.backends))
  for (const capability of config.capabilities) {
    try {
      const override = config.backends[capability.capability]
      const resolved = await resolveCapability(capability, {
        binary: composed.binary,
        cache: shared.cache,
        probe: shared.probe,
        sandbox: composed.runtime.options.sandbox,
        ...(config.checkTimeoutMs !== undefined ? { timeoutMs: config.checkTimeoutMs } : {}),
        warn: (message) => warnings.push(message),
        ...(override !== undefined ? { override } : {}),
      })
      capabilities.push(resolved.report)
      if (resolved.tool) serveCapability(composed.tools, capability.capability, resolved.tool)
      else {
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
  return capabilities
}
