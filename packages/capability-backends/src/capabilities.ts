import { basename } from 'node:path'
import { type ArgSpec, LoadingError } from '@toolvisor/describe-v2'
import {
  type BinaryTools,
  type LoadedTool,
  RESERVED_NAMES,
  type Tool,
  type ToolRegistry,
  type ToolResult,
} from '@toolvisor/toolbox'
import {
  type CheckCache,
  type CheckResult,
  type CheckStatus,
  cachedCheck,
  loadFailureStatus,
} from './check.js'
import { CapabilityErrorCodes } from './errors.js'

/** A capability as configured: one model-facing tool, ordered backends, preferred first. */
export interface CapabilityConfig {
  readonly capability: string
  /** Paths of the backend executables, preferred first. */
  readonly backends: readonly string[]
  /** A required capability with no usable backend fails to load; an optional one is left out. */
  readonly required: boolean
}

/** One backend in a report. */
export interface BackendReport {
  /** The backend's name: its file name (`read-jina`). */
  readonly name: string
  readonly path: string
  readonly status: CheckStatus
  readonly ms?: number
  readonly detail?: string
  readonly fix?: string
}

/** What `check --probe` reports of a capability. */
export interface CapabilityReport {
  readonly capability: string
  readonly required: boolean
  /** The backend that serves it: the first `ok`, else the first `unverified`, else none. */
  readonly active: string | null
  /** Every candidate, in the order tried (an operator override moves one first). */
  readonly backends: readonly BackendReport[]
}

/** A resolved capability: its report, and the tool that serves it when it has an active backend. */
export interface ResolvedCapability {
  readonly report: CapabilityReport
  readonly tool?: Tool
}

/** What resolving needs. */
export interface ResolveOptions {
  readonly binary: BinaryTools
  readonly cache: CheckCache
  /** Run every probe afresh (`--probe`), ignoring the cache. */
  readonly probe: boolean
  /** The operator's override (`--backend CAP=NAME`): the backend to move first. */
  readonly override?: string
  /** Warnings (an override naming no backend). */
  readonly warn: (message: string) => void
  /** The bound on one probe (default 10 s). */
  readonly timeoutMs?: number
  /** The operator's sandbox mechanism (`--sandbox`), if any: a field it cannot honour is `skipped`. */
  readonly sandbox?: string | undefined
}

/** Warnings for operator overrides that name no configured capability (they are ignored). */
export function unknownOverrides(
  capabilities: readonly CapabilityConfig[],
  overrides: Readonly<Record<string, string>>,
): string[] {
  const known = new Set(capabilities.map((c) => c.capability))
  return Object.entries(overrides)
    .filter(([name]) => !known.has(name))
    .map(
      ([name, backend]) =>
        `--backend ${name}=${backend}: no capability is named "${name}"; the override is ignored`,
    )
}

/** Moves the overridden backend first; an unknown name is ignored with a warning (a stale override never hides a working backend). */
export function ordered(
  config: CapabilityConfig,
  override: string | undefined,
  warn: (message: string) => void,
): string[] {
  const backends = [...config.backends]
  if (override === undefined) return backends
  const index = backends.findIndex((path) => basename(path) === override)
  if (index === -1) {
    warn(
      `--backend ${config.capability}=${override}: ${config.capability} has no backend named "${override}" ` +
        `(its backends: ${backends.map((p) => basename(p)).join(', ')}); the override is ignored`,
    )
    return backends
  }
  const [chosen] = backends.splice(index, 1)
  return [chosen!, ...backends]
}

/**
 * Loads a capability's backends, checks they agree on what the model sees, probes them, and picks
 * the active one. Throws a LoadingError when the configuration itself is wrong (backends that
 * disagree, a backend that cannot serve a capability); a backend that merely fails to load or
 * whose probe fails is reported, not thrown.
 */
export async function resolveCapability(
  config: CapabilityConfig,
  options: ResolveOptions,
): Promise<ResolvedCapability> {
  const paths = ordered(config, options.override, options.warn)
  const loaded: Array<{ path: string; tool?: LoadedTool; failure?: CheckResult }> = []
  for (const path of paths) {
    try {
      loaded.push({ path, tool: await options.binary.load(path) })
    } catch (error) {
      if (!LoadingError.is(error)) throw error
      loaded.push({
        path,
        failure: {
          status: loadFailureStatus(error.code, options.sandbox),
          detail: error.message,
          at: Date.now(),
        },
      })
    }
  }
  const present = loaded.filter(
    (entry): entry is { path: string; tool: LoadedTool } => entry.tool !== undefined,
  )
  for (const entry of present) assertServable(config, entry.tool)
  const reference = present[0]
  if (reference) for (const entry of present.slice(1)) assertSameArgs(config, reference.tool, entry.tool)

  const backends: BackendReport[] = []
  for (const entry of loaded) {
    let result = entry.failure
    if (entry.tool) {
      result = await cachedCheck(options.binary, entry.tool, options.cache, options)
    }
    backends.push({
      name: basename(entry.path),
      path: entry.path,
      status: result!.status,
      ...(result!.ms !== undefined ? { ms: result!.ms } : {}),
      ...(result!.detail !== undefined ? { detail: result!.detail } : {}),
      ...(result!.fix !== undefined ? { fix: result!.fix } : {}),
    })
  }
  const pick = (status: CheckStatus) => backends.findIndex((b) => b.status === status)
  const index = pick('ok') !== -1 ? pick('ok') : pick('unverified')
  const report: CapabilityReport = {
    capability: config.capability,
    required: config.required,
    active: index === -1 ? null : backends[index]!.name,
    backends,
  }
  if (index === -1) return { report }
  const active = loaded[index]!.tool!
  return {
    report,
    tool: capabilityTool(config.capability, backends[index]!.name, options.binary.tools(active)[0]!),
  }
}

/** Why a capability has no backend, one clause per candidate. */
export function whyNoBackend(report: CapabilityReport): string {
  const reasons = report.backends.map((b) => `${b.name}: ${b.status}${b.detail ? ` (${b.detail})` : ''}`)
  return `capability ${report.capability} has no usable backend: ${reasons.join('; ')}`
}

function assertServable(config: CapabilityConfig, tool: LoadedTool): void {
  const fail = (reason: string) => {
    throw new LoadingError(CapabilityErrorCodes.BAD_BACKEND, {
      tool: tool.spec.path,
      reason: `capability ${config.capability}: ${reason}`,
    })
  }
  if (tool.spec.commands.length > 0)
    fail('a backend with sub-commands cannot serve one capability; name one tool per backend')
}

/** Backends must agree on what the model sees: names, backing types, arity (ruling 21). */
function assertSameArgs(config: CapabilityConfig, reference: LoadedTool, other: LoadedTool): void {
  const describe = (arg: ArgSpec | undefined) => (arg ? `${arg.backingType}, ${arg.arity}` : 'absent')
  const names = new Set([...reference.spec.args.map((a) => a.name), ...other.spec.args.map((a) => a.name)])
  for (const name of names) {
    const a = reference.spec.args.find((arg) => arg.name === name)
    const b = other.spec.args.find((arg) => arg.name === name)
    if (a && b && a.backingType === b.backingType && a.arity === b.arity) continue
    const index = other.spec.args.findIndex((arg) => arg.name === name)
    throw new LoadingError(CapabilityErrorCodes.ARGS_DIFFER, {
      tool: other.spec.path,
      field: index === -1 ? '$.args' : `$.args[${index}]`,
      reason:
        `capability ${config.capability}: argument "${name}" differs between backends: ` +
        `${describe(b)} in ${basename(other.spec.path)}, ${describe(a)} in ${basename(reference.spec.path)}; ` +
        'every backend must expose the same arguments (names, backing types, arity)',
    })
  }
}

/**
 * The model-facing tool of a capability: named after it, with the active backend's description
 * and schema; every result names the backend that served it (`meta.backend` and a last line
 * `[backend: NAME]`). A failed call does not fall back to another backend.
 */
export function capabilityTool(capability: string, backend: string, tool: Tool): Tool {
  return {
    name: capability,
    description: tool.description,
    inputSchema: tool.inputSchema,
    async call(args, ctx) {
      return withBackend(await tool.call(args, ctx), backend)
    },
  }
}

function withBackend(result: ToolResult, backend: string): ToolResult {
  const line = `[backend: ${backend}]`
  const content = [...result.content]
  const last = content.at(-1)
  if (last) content[content.length - 1] = { type: 'text', text: `${last.text.replace(/\n$/, '')}\n${line}` }
  else content.push({ type: 'text', text: line })
  return { ...result, content, meta: { ...result.meta, backend } }
}

/**
 * Registers a resolved capability's tool and returns its removal. A capability named like a
 * reserved tool (`help`, `processes`) or like a tool already registered is a LoadingError
 * (`CAPABILITY_ERR_DUPLICATE`), whatever the order things were registered in: `toolvisor mcp`
 * and `toolvisor check` both register through here, so they agree.
 */
export function serveCapability(registry: ToolRegistry, capability: string, tool: Tool): () => void {
  const fail = (why: string): never => {
    throw new LoadingError(CapabilityErrorCodes.DUPLICATE, {
      tool: capability,
      reason: `capability ${capability} cannot be served: ${why}`,
    })
  }
  const reserved = RESERVED_NAMES[capability]
  if (reserved !== undefined) fail(`"${capability}" is reserved for ${reserved}; rename the capability`)
  try {
    return registry.register(tool)
  } catch (error) {
    return fail((error as Error).message)
  }
}
