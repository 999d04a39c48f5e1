import { LoadingError } from '@toolvisor/describe-v2'
import type { LoadedTool } from './binary-tool.js'
import { type ToolboxErrorCode, ToolboxErrorCodes } from './errors.js'
import { reportOf } from './loader.js'
import { type Modes, unsupportedMode } from './modes.js'
import { providerSafeName, RESERVED_NAMES } from './names.js'
import type { Tool, ToolRegistry } from './types.js'

/** What serving loaded tools needs. */
export interface ServeOptions {
  readonly registry: ToolRegistry
  readonly modes: Modes
  /** The model-facing tools of a loaded tool. */
  readonly toolsOf: (loaded: LoadedTool) => Tool[]
  /** The shared `help` tool for the served tools, when any declares help. */
  readonly helpTool: (loaded: readonly LoadedTool[]) => Tool | undefined
}

/** Loaded tools being served. */
export interface Served {
  /** The tools served now, in load order. */
  served(): readonly LoadedTool[]
  /** Stops serving tools whose mode gets a handler later. */
  close(): void
}

/**
 * Registers the model-facing tools of loaded tools (with the companions their mode handler gives,
 * such as a service's `slug.send`), one loaded tool at a time and all of its tools or none: a reserved name, a name another tool has (before or after the `.` → `__` mapping), a
 * name that cannot be made provider-safe, or a mode without a handler is a load report naming the
 * tool, the field and, for a collision, the other tool's path. The others are served. A tool
 * whose mode has no handler yet is served once one is registered. The one path `toolvisor mcp`
 * and `toolvisor check` both take, so check reports exactly what mcp serves.
 */
export function serve(options: ServeOptions, loaded: readonly LoadedTool[]): Served {
  const { registry, modes } = options
  const served: LoadedTool[] = []
  const owners = new Map<string, Owner>()
  const parked = new Map<LoadedTool, () => void>()
  let help: (() => void) | undefined

  const add = (tool: LoadedTool): boolean => {
    if (modes.get(tool.spec.process.mode) === undefined) {
      const error = new LoadingError(ToolboxErrorCodes.UNSUPPORTED_MODE, {
        tool: tool.spec.path,
        field: '$.process.mode',
        reason: unsupportedMode(tool.spec.process.mode, modes),
      })
      parked.set(tool, registry.reportLoadError(reportOf(tool.spec.path, error)))
      return false
    }
    const own = options.toolsOf(tool)
    const tools = [...own, ...(modes.get(tool.spec.process.mode)?.companions?.(tool) ?? [])]
    try {
      for (const [index, made] of tools.entries()) {
        checkName({ tool, name: made.name, field: fieldOf(tool, index, own.length), owners, registry })
      }
    } catch (error) {
      registry.reportLoadError(reportOf(tool.spec.path, error))
      return false
    }
    for (const made of tools) {
      registry.register(made)
      owners.set(providerSafeName(made.name)!, { path: tool.spec.path, name: made.name })
    }
    served.push(tool)
    return true
  }

  const refreshHelp = () => {
    help?.()
    const tool = options.helpTool(served)
    help = tool === undefined ? undefined : registry.register(tool)
  }

  for (const tool of loaded) add(tool)
  refreshHelp()
  const unsubscribe = modes.onRegister((mode) => {
    let added = false
    for (const [tool, withdraw] of [...parked]) {
      if (tool.spec.process.mode !== mode) continue
      parked.delete(tool)
      withdraw()
      added = add(tool) || added
    }
    if (added) refreshHelp()
  })
  return { served: () => [...served], close: unsubscribe }
}

/** The served tool that holds a provider-safe name. */
interface Owner {
  readonly path: string
  readonly name: string
}

/** The field a model-facing name comes from: the slug, a command's name, or a companion's `input`. */
function fieldOf(tool: LoadedTool, index: number, own: number): string {
  if (index >= own) return '$.process.input'
  return tool.spec.commands.length === 0 ? '$.slug' : `$.commands[${index}].name`
}

/** One model-facing name to check, with where it comes from and what holds names already. */
interface NameCheck {
  readonly tool: LoadedTool
  readonly name: string
  readonly field: string
  readonly owners: ReadonlyMap<string, Owner>
  readonly registry: ToolRegistry
}

/** Throws the LoadingError of a model-facing name this tool cannot have. */
function checkName({ tool, name, field, owners, registry }: NameCheck): void {
  const fail = (code: ToolboxErrorCode, reason: string): never => {
    throw new LoadingError(code, { tool: tool.spec.path, field, reason })
  }
  const reserved = RESERVED_NAMES[name]
  if (reserved !== undefined)
    fail(ToolboxErrorCodes.NAME_TAKEN, `"${name}" is reserved for ${reserved}; rename the tool`)
  const safe = providerSafeName(name)
  if (safe === undefined) {
    const mapped = name.replaceAll('.', '__')
    fail(
      ToolboxErrorCodes.NOT_PROVIDER_SAFE,
      `"${name}" becomes "${mapped}" (${mapped.length} characters) for providers, which accept ` +
        '^[a-zA-Z0-9_-]{1,64}$; shorten or rename it',
    )
  }
  const owner = owners.get(safe!)
  if (owner !== undefined) {
    const reason =
      owner.name === name
        ? `"${name}" is already the name of a tool of ${owner.path}; rename one of them`
        : `"${name}" and "${owner.name}" of ${owner.path} are both "${safe}" for providers; rename one of them`
    fail(ToolboxErrorCodes.NAME_TAKEN, reason)
  }
  if (registry.get(name) !== undefined || registry.get(safe!) !== undefined)
    fail(ToolboxErrorCodes.NAME_TAKEN, `"${name}" is already the name of another tool; rename the tool`)
}
