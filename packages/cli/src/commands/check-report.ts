import { visibleJson, visibleLine } from '@toolvisor/answers'
import type { CapabilityReport, CheckResult } from '@toolvisor/capability-backends'
import {
  CORE_VARIABLES,
  DEFAULT_EXCLUDES,
  type KeptRecord,
  type LaunchFacts,
  type LostProcess,
} from '@toolvisor/process-runtime'
import type { Config } from '../config.js'
import { human, type Io } from '../output.js'
import { containmentLines, containmentReport, type LimitsReport, limitsLine } from './check-containment.js'

/** One tool of the toolboxes in the report. */
export interface ToolReport {
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
  /** The limits it runs under and what enforces each (decision 0097). */
  readonly limits?: LimitsReport
  /** A sandboxed tool's network: `host`, `none`, or its allow list and what holds it to it (decision 0111). */
  readonly network?:
    | { readonly net: 'host' | 'none' }
    | {
        readonly net: 'allow list'
        readonly allow: readonly string[]
        readonly deny: readonly string[]
        readonly publish: readonly number[]
        readonly enforcedBy: string
      }
  /**
   * The arguments that take a value starting with `-` (`name`, or `command.name`) and who said so:
   * the tool's own `allow_dash`, or the operator's `allowDash` (decision 0099).
   */
  readonly allowDash?: ReadonlyArray<{ readonly argument: string; readonly by: 'tool' | 'operator' }>
  readonly detail?: string
  readonly fix?: string
}

/** Everything `toolvisor check` prints. */
export interface CheckReport {
  readonly capabilities: readonly CapabilityReport[]
  readonly tools: readonly ToolReport[]
  /** The provider-safe names `toolvisor mcp` would serve. */
  readonly serves: readonly string[]
  /** Files in a toolbox without an execute bit: not tools. */
  readonly notTools: readonly string[]
  readonly errors: readonly string[]
  readonly warnings: readonly string[]
  readonly runtime: ReturnType<typeof runtimeReport>
}

/**
 * Prints the report as text, or as one JSON document. A check's detail and fix, a tool's name or
 * path and a load error are the tools' own text: the text form shows them escaped (a field on its
 * line, a message's later lines indented), the JSON form with JSON's escapes (`visibleJson`).
 */
export function printCheck(report: CheckReport, json: boolean, io: Io): void {
  if (!json) {
    io.out(table(report) + runtimeLines(report.runtime, report.tools))
    return
  }
  const document = {
    capabilities: report.capabilities.map((c) => ({
      capability: c.capability,
      active: c.active,
      backends: c.backends.map(({ path: _path, ...backend }) => backend),
    })),
    tools: report.tools.map(({ path: _path, ...tool }) => tool),
    serves: report.serves,
    ...(report.notTools.length > 0 ? { notTools: report.notTools } : {}),
    runtime: report.runtime,
    ...(report.errors.length > 0 ? { errors: report.errors } : {}),
    ...(report.warnings.length > 0 ? { warnings: report.warnings } : {}),
  }
  io.out(`${visibleJson(document, 2)}\n`)
}

/** How tools are started here: for operators, what `check --probe` prints last. */
export function runtimeReport(
  facts: LaunchFacts,
  config: Config,
  lost: readonly LostProcess[] = [],
  kept: readonly KeptRecord[] = [],
) {
  return {
    sandbox: config.sandbox ?? null,
    state: facts.state,
    kept: kept.map((p) => ({
      tool: p.tool,
      pid: p.pid,
      ...(p.task ? { task: p.task } : {}),
      ...(p.session ? { session: p.session } : {}),
      startedAt: p.startedAt,
    })),
    lost: lost.map((p) => ({
      tool: p.tool,
      ...(p.task ? { task: p.task } : {}),
      ...(p.session ? { session: p.session } : {}),
      ...(p.kind ? { kind: p.kind } : {}),
      startedAt: p.startedAt,
      ...(p.reportedAt ? { reportedAt: p.reportedAt } : {}),
      leftoversKilled: p.killed,
    })),
    execHelper: facts.execHelper.available
      ? { available: true, path: facts.execHelper.path }
      : { available: false, reason: facts.execHelper.reason, fix: facts.execHelper.fix },
    forkServer: facts.forkServer,
    containment: containmentReport(facts.containment),
    network: facts.network,
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

function runtimeLines(runtime: ReturnType<typeof runtimeReport>, tools: readonly ToolReport[]): string {
  const helper = runtime.execHelper.available
    ? `toolvisor-exec (${runtime.execHelper.path}): every tool starts with only its own environment and descriptors 0-2`
    : `toolvisor-exec missing: ${runtime.execHelper.reason}`
  const lines = [
    'runtime',
    `  sandbox: ${sandboxLine(runtime.sandbox, tools)}`,
    `  final exec: ${helper}`,
    `  launches: ${
      runtime.forkServer.available
        ? `forked from toolvisor-spawnd (${runtime.forkServer.path}), a small process started once: a launch does not pay for this process's size`
        : `spawned from this process (${runtime.forkServer.reason}): each pays for copying its page tables, more the larger it is`
    }`,
    ...containmentLines(runtime.containment),
    networkLine(runtime.network),
    ...(runtime.sandboxUser !== undefined
      ? [`  sandbox user: ${runtime.sandboxUser} (sandboxed tools that declare no run_as run as it)`]
      : []),
    `  environment: inherit ${runtime.environment.inherit}; never ${runtime.environment.excludes.join(', ')}` +
      `${runtime.environment.includeOnly ? `; only ${runtime.environment.includeOnly.join(', ')}` : ''}` +
      `${runtime.environment.set ? `; set ${runtime.environment.set.join(', ')}` : ''}` +
      `; core is ${runtime.environment.core.join(', ')}`,
    `  state: ${runtime.state.path}, ${mib(runtime.state.bytes)} of a ${mib(runtime.state.budget)} budget (ended runs are pruned oldest first)`,
    ...lostLines(runtime.lost),
    ...keptLines(runtime.kept),
  ]
  return `${lines.join('\n')}\n`
}

/** `network: ...`: whether allow lists are enforced here, and the operator's bounds. */
function networkLine(network: ReturnType<typeof runtimeReport>['network']): string {
  const gates = network.gates.available
    ? `allow lists through toolvisor's proxy${network.gates.namespaceHelper ? ` (namespace helper ${network.gates.namespaceHelper})` : ''}`
    : `allow lists refused: ${network.gates.reason} (fix: ${network.gates.fix})`
  const bounds = [
    network.force === 'none' ? 'no tool gets any network (force none)' : '',
    network.host ? '' : 'no tool gets the host network',
    network.ceiling ? `tools' lists within ${network.ceiling.map(visibleLine).join(', ')}` : '',
  ].filter(Boolean)
  return `  network: ${gates}${bounds.length > 0 ? `; ${bounds.join('; ')}` : ''}`
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** What earlier runs lost when they died: the operator's record (an owner that comes back sees its own). */
function lostLines(lost: ReturnType<typeof runtimeReport>['lost']): string[] {
  if (lost.length === 0) return ['  lost on restart: nothing']
  return [
    `  lost on restart (${lost.length}; a run that died with them running, found at a later start):`,
    ...lost.map(
      (p) =>
        `    ${visibleLine(p.task ?? '(no task)')} ${visibleLine(p.tool)}${p.kind ? ` (${p.kind})` : ''}, ${p.session ? `session ${visibleLine(p.session)}` : 'no session'}, started ${p.startedAt}` +
        `${p.leftoversKilled > 0 ? `, ${p.leftoversKilled} leftover process(es) killed` : ''}`,
    ),
  ]
}

/** What keepers hold with no serve to hold them (decision 0113): the next `serve --keep-processes` takes them back. */
function keptLines(kept: ReturnType<typeof runtimeReport>['kept']): string[] {
  if (kept.length === 0) return ['  kept: nothing waits for a serve']
  return [
    `  kept (${kept.length}; held by their keepers until a serve --keep-processes on this state directory takes them back, or check --probe --reap ends them):`,
    ...kept.map(
      (p) =>
        `    ${visibleLine(p.task ?? '(no task)')} ${visibleLine(p.tool)}, pid ${p.pid}, ${p.session ? `session ${visibleLine(p.session)}` : 'no session'}, started ${p.startedAt}`,
    ),
  ]
}

const row = (name: string, status: string, ms: number | undefined, rest: string) =>
  `    ${visibleLine(name).padEnd(20)} ${status.padEnd(11)} ${ms === undefined ? '' : `${ms} ms`.padStart(8)}  ${rest}`.trimEnd()
/** A check's detail and fix: the tool's own words, each kept on the row. */
const explain = (detail?: string, fix?: string) =>
  [detail, fix ? `fix: ${fix}` : undefined]
    .filter((part) => part !== undefined && part !== '')
    .map((part) => visibleLine(part!))
    .join('; ')

function capabilityLines(capabilities: readonly CapabilityReport[]): string[] {
  if (capabilities.length === 0) return []
  const lines = ['capabilities']
  for (const c of capabilities) {
    const active = c.active === null ? 'NO ACTIVE BACKEND' : `active ${c.active}`
    lines.push(`  ${visibleLine(c.capability)}${c.required ? ' (required)' : ''}: ${visibleLine(active)}`)
    for (const b of c.backends) lines.push(row(b.name, b.status, b.ms, explain(b.detail, b.fix)))
  }
  return lines
}

/** `content (operator), diff (tool)`: the arguments that take a leading dash, and who allowed it. */
function dashLine(allowed: NonNullable<ToolReport['allowDash']>): string {
  return allowed.map((each) => `${visibleLine(each.argument)} (${each.by})`).join(' ')
}

function toolLines(tools: readonly ToolReport[]): string[] {
  if (tools.length === 0) return []
  const lines = ['tools']
  for (const t of tools) {
    const sandbox = t.mechanism
      ? `sandbox ${t.mechanism}${t.gaps ? ` (gaps: ${visibleLine(t.gaps.join('; '))})` : ''}`
      : ''
    const how = [
      t.user ? `as ${visibleLine(t.user)}` : '',
      t.inherit ? `env ${t.inherit}` : '',
      t.limits ? `limits ${limitsLine(t.limits)}` : '',
      t.network && t.network.net === 'allow list'
        ? `net allow ${visibleLine(t.network.allow.join(' ') || '(none)')}${t.network.deny.length > 0 ? ` deny ${visibleLine(t.network.deny.join(' '))}` : ''}${t.network.publish.length > 0 ? ` publish ${t.network.publish.join(' ')}` : ''}`
        : t.network
          ? `net ${t.network.net}`
          : '',
      t.allowDash ? `leading "-" taken by ${dashLine(t.allowDash)}` : '',
    ]
      .filter(Boolean)
      .join(', ')
    lines.push(
      row(t.tool, t.status, t.ms, [how, sandbox, explain(t.detail, t.fix)].filter(Boolean).join('; ')),
    )
  }
  return lines
}

function table(report: CheckReport): string {
  const lines = [...capabilityLines(report.capabilities), ...toolLines(report.tools)]
  if (lines.length > 0) lines.push(`serves: ${report.serves.map(visibleLine).join(', ')}`)
  if (report.notTools.length > 0)
    lines.push(
      'not tools (no execute bit, or an editor backup)',
      ...report.notTools.map((p) => `  ${visibleLine(p)}`),
    )
  if (report.errors.length > 0) lines.push('errors', ...report.errors.map((e) => `  ${human(e, '    ')}`))
  if (report.warnings.length > 0)
    lines.push('warnings', ...report.warnings.map((w) => `  ${human(w, '    ')}`))
  if (lines.length === 0) lines.push('nothing configured: pass --toolbox DIR or --config FILE')
  return `${lines.join('\n')}\n`
}

/**
 * The configured mechanism; for `auto`, what it chose: each sandboxed tool gets the first of
 * bwrap, landlock that honours its declaration, counted here (each tool's row names its own).
 */
function sandboxLine(sandbox: string | null, tools: readonly ToolReport[]): string {
  if (sandbox !== 'auto') return sandbox ?? 'none configured'
  const chosen = new Map<string, number>()
  for (const { mechanism } of tools) if (mechanism) chosen.set(mechanism, (chosen.get(mechanism) ?? 0) + 1)
  const counted = [...chosen].map(([name, n]) => `${name} for ${n} tool${n === 1 ? '' : 's'}`).join(', ')
  return `auto: each sandboxed tool gets the first of bwrap, landlock that honours its declaration; here ${counted || 'no tool declares a sandbox'}`
}
