import { quoteInput } from '@toolvisor/answers'
import { ToolboxError } from './errors.js'
import { providerSafeName } from './names.js'
import type { Guidance, LoadReport, Tool, ToolCallContext, ToolRegistry, ToolResult } from './types.js'

/** The provider-safe name of a tool; throws when there is none. */
function safeNameOf(name: string): string {
  const mapped = providerSafeName(name)
  if (mapped === undefined) {
    throw new ToolboxError(
      'TOOLBOX_ERR_NOT_PROVIDER_SAFE',
      `tool name "${name}" cannot be made provider-safe: after mapping "." to "__" it must match ^[a-zA-Z0-9_-]{1,64}$`,
    )
  }
  return mapped
}

/** Creates an empty `tools` registry. */
export function createToolRegistry(): ToolRegistry {
  const tools = new Map<string, Tool>()
  const bySafeName = new Map<string, string>()
  const reports: LoadReport[] = []
  const { changed, onChange } = changeListeners()

  return {
    register(tool) {
      const mapped = safeNameOf(tool.name)
      if (tools.has(tool.name)) {
        throw new ToolboxError('TOOLBOX_ERR_NAME_TAKEN', `a tool named "${tool.name}" is already registered`)
      }
      const other = bySafeName.get(mapped)
      if (other !== undefined) {
        throw new ToolboxError(
          'TOOLBOX_ERR_NAME_TAKEN',
          `tool "${tool.name}" collides with "${other}": both become "${mapped}" for providers; rename one`,
        )
      }
      tools.set(tool.name, tool)
      bySafeName.set(mapped, tool.name)
      changed()
      return () => {
        if (tools.get(tool.name) !== tool) return
        tools.delete(tool.name)
        bySafeName.delete(mapped)
        changed()
      }
    },
    list: () => [...tools.values()],
    get(name) {
      return tools.get(name) ?? tools.get(bySafeName.get(name) ?? '')
    },
    safeName: safeNameOf,
    async call(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolResult> {
      const tool = tools.get(name) ?? tools.get(bySafeName.get(name) ?? '')
      return tool ? tool.call(args, ctx) : unknownTool(name, [...tools.keys()])
    },
    loadErrors: () => [...reports],
    reportLoadError(report) {
      reports.push(report)
      changed()
      return () => {
        const index = reports.indexOf(report)
        if (index === -1) return
        reports.splice(index, 1)
        changed()
      }
    },
    onChange,
    ...guidanceSections(),
  }
}

/** `addGuidance` and `guidance` of one registry: a section per name, listed by order. */
function guidanceSections(): Required<Pick<ToolRegistry, 'addGuidance' | 'guidance'>> {
  const sections = new Map<string, Guidance>()
  return {
    addGuidance(section) {
      sections.delete(section.name)
      sections.set(section.name, section)
      return () => {
        if (sections.get(section.name) === section) sections.delete(section.name)
      }
    },
    // A stable sort: sections of one order stay in the order they were added.
    guidance: () => [...sections.values()].sort((a, b) => a.order - b.order),
  }
}

/** The answer to a call of a tool nobody registered: the tools there are. */
function unknownTool(name: string, names: readonly string[]): ToolResult {
  const known = names.map((n) => safeNameOf(n)).join(', ')
  return {
    content: [
      { type: 'text', text: `unknown tool ${quoteInput(name)}; the tools are: ${known || '(none)'}` },
    ],
    isError: true,
  }
}

/** The listeners of one registry: `changed()` calls each, `onChange` is `ToolRegistry.onChange`. */
function changeListeners(): { changed: () => void; onChange: (listener: () => void) => () => void } {
  const listeners = new Set<() => void>()
  return {
    changed() {
      for (const listener of [...listeners]) {
        try {
          listener()
        } catch (error) {
          // A listener bug must neither undo the change nor silence the others; it is reported as
          // a process warning (stderr), never a crash of every session.
          process.emitWarning(error as Error)
        }
      }
    },
    onChange(listener) {
      // A wrapper per subscription, so subscribing one function twice gives two independent calls.
      const entry = (): void => listener()
      listeners.add(entry)
      return () => {
        listeners.delete(entry)
      }
    },
  }
}
