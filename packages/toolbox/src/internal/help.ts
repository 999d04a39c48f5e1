import { fitBytes, quoteInput, rendererFor } from '@toolvisor/answers'
import { RAW_ONESHOT } from '@toolvisor/process-runtime'
import type { BinaryToolDeps, LoadedTool } from '../binary-tool.js'
import { providerSafeName } from '../names.js'
import { bytesText, failure, succeeded, text } from '../results.js'
import type { Tool } from '../types.js'

/** How help runs and answers. */
export interface HelpOptions {
  /** The bound on one `TOOL help` run. */
  readonly helpTimeoutMs: number
  /** The most bytes an answer holds. */
  readonly resultBytes: number
}

interface HelpEntry {
  readonly tool: LoadedTool
  readonly command?: string
}

/**
 * The shared `help` tool (ruling 7): `{ tool }` runs `TOOL help [command]` on demand, under the
 * tool's own runtime, and returns its stdout as text. Only tools that declare `"help": true` are
 * listed. Returns `undefined` when none does.
 */
export function helpTool(
  loaded: readonly LoadedTool[],
  deps: Pick<BinaryToolDeps, 'runtime'>,
  options: HelpOptions,
): Tool | undefined {
  const entries = new Map<string, HelpEntry>()
  for (const tool of loaded) {
    if (!tool.spec.help) continue
    if (tool.spec.commands.length === 0) entries.set(tool.spec.slug, { tool })
    for (const command of tool.spec.commands)
      entries.set(command.internalName, { tool, command: command.name })
  }
  if (entries.size === 0) return undefined
  const names = [...entries.keys()].map((name) => providerSafeName(name) ?? name)
  return {
    name: 'help',
    description: `Longer help for a tool, on demand: usage, examples, caveats. Tools with help: ${names.join(', ')}.`,
    inputSchema: {
      type: 'object',
      properties: { tool: { type: 'string', enum: names, description: 'the tool to explain' } },
      required: ['tool'],
      additionalProperties: false,
    },
    // A tool's help is text it prints, run under the confining policy: it changes nothing.
    annotations: { title: 'Help for a tool', readOnlyHint: true, openWorldHint: false },
    async call(args, ctx) {
      const asked = (args as { tool?: unknown } | undefined)?.tool
      const key =
        typeof asked === 'string'
          ? [...entries.keys()].find((n) => n === asked || providerSafeName(n) === asked)
          : undefined
      const entry = key === undefined ? undefined : entries.get(key)
      if (!entry)
        return text(`help: no help for ${quoteInput(asked)}; tools with help: ${names.join(', ')}`, true)
      const render = rendererFor(entry.tool.keepControls)
      const process = deps.runtime.start({
        // Like describe, help runs before anything is called: under the confining policy.
        tool: entry.tool.confined,
        argv: entry.command === undefined ? ['help'] : ['help', entry.command],
        process: RAW_ONESHOT,
        timeoutMs: options.helpTimeoutMs,
        signal: ctx.signal,
        context: ctx.sessionId === undefined ? {} : { sessionId: ctx.sessionId },
      })
      const exit = await process.exit
      if (!succeeded(exit)) return failure(`${key} help`, process, exit, { render })
      const stdout = process.output.stdout()
      const shown = fitBytes(stdout.head, options.resultBytes, render)
      const cut =
        shown.used < stdout.totalBytes
          ? `\n[help cut: the first ${shown.used} of ${stdout.totalBytes} bytes]`
          : ''
      return text(bytesText(shown) + cut)
    },
  }
}
