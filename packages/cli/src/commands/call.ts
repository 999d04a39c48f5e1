import { visibleLine, visibleText } from '@toolvisor/answers'
import type { LoadedTool, Tool, ToolProgress, ToolResult } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { CliError } from '../errors.js'
import { type Composed, compose, reportLost } from '../internal/compose.js'
import { configFileOf, configOf, type FlagValues, parseLine, usageOf } from '../internal/flags.js'
import { withShutdownSignals } from '../internal/signals.js'
import { checkToolboxes, entryOf, type FoundTool, findTool, isToolPath } from '../internal/toolboxes.js'
import { type Io, logTo } from '../output.js'
import { connectedCall } from './call-connected.js'

/** `toolvisor call --help`. */
export const CALL_USAGE = usageOf(
  'call',
  `usage: toolvisor call TOOL [ARGS_JSON] [--command NAME] [--progress] [flags]

Runs one call of TOOL with ARGS_JSON (a JSON object, default {}) and prints the result the model
would get. TOOL is the path of the tool's file, or with --toolbox DIR a tool's name there (its
model-facing name such as git_lite__log, or its file name). A stream tool is waited for until it
ends (use --yield-ms to get the running placeholder instead). Ctrl-C cancels the call: the tool
gets its declared cancel, then SIGKILL. Exit 0 on success, 1 when the tool failed, 2 on a loading
or usage error, 130 when cancelled.

With --connect ADDR the call is made in a running toolvisor serve instead, in the session --session
names (default cli), TOOL named as the model sees it: what it starts (a service, a stream task)
stays there, for the next call to read (processes), talk to (TOOL__send) or stop:

  toolvisor call log_watcher '{"file":"/var/log/app.log"}' --connect 127.0.0.1:8765 --session me
  toolvisor call log_watcher__send '{"process":"p1","event":{"op":"pattern","value":"WARN"}}' --connect 127.0.0.1:8765 --session me
  toolvisor call processes '{"command":"read","process":"p1"}' --connect 127.0.0.1:8765 --session me`,
)

const DAY_MS = 24 * 60 * 60 * 1000

/** A call's command line, checked: the flags, the tool path, the arguments, the yield window. */
interface CallLine {
  readonly values: FlagValues
  readonly config: Config
  readonly path: string
  readonly args: Record<string, unknown>
  readonly yieldMs: number
}

/** Checks a call's command line; an exit code when it is help or a usage error (printed). */
function callLine(argv: readonly string[], io: Io): CallLine | number {
  const { values, positionals } = parseLine('call', argv, CALL_USAGE)
  if (values.help) {
    io.out(`${CALL_USAGE}\n`)
    return 0
  }
  if (positionals.length < 1 || positionals.length > 2) {
    io.err(
      `toolvisor call: expected TOOL and at most one ARGS_JSON, got ${positionals.length} arguments\n\n${CALL_USAGE}\n`,
    )
    return 2
  }
  const args = argsOf(positionals[1])
  if (typeof args === 'string') {
    io.err(`toolvisor call: ${args}\n`)
    return 2
  }
  const config = configOf('call', values)
  return { values, config, path: positionals[0]!, args, yieldMs: config.call?.yieldMs ?? DAY_MS }
}

/** `toolvisor call TOOL [ARGS_JSON]`. */
export async function callCommand(
  argv: readonly string[],
  io: Io,
  signals: NodeJS.EventEmitter = process,
): Promise<number> {
  const line = callLine(argv, io)
  if (typeof line === 'number') return line
  if (line.config.call?.connect !== undefined) return connectedCall(line, io, signals)
  const { values, config, args, yieldMs } = line
  const byName = !isToolPath(line.path)
  if (byName && config.toolboxes.length === 0) {
    const hint = 'to call a tool by its name, pass the toolbox that holds it: --toolbox DIR'
    throw new CliError('CLI_ERR_USAGE', `${line.path}: no such file; ${hint}`)
  }
  if (byName) checkToolboxes(config.toolboxes, true)
  const composed = await compose(config, { loadToolboxes: false, yieldMs, configFile: configFileOf(values) })
  reportLost(composed, logTo(io))
  const stop = withShutdownSignals(signals)
  try {
    // A LoadingError reaches main(), which prints it and exits 2.
    const found: FoundTool = byName
      ? await findTool(composed, config.toolboxes, line.path)
      : { loaded: await composed.binary.load(line.path, entryOf(config.toolboxes, line.path)) }
    const command = typeof values.command === 'string' ? values.command : undefined
    const tool = found.tool ?? pick(found.loaded, composed.binary.tools(found.loaded), command)
    if (typeof tool === 'string') {
      // Names the tool's commands, from its describe document.
      io.err(`toolvisor call: ${visibleText(tool)}\n`)
      return 2
    }
    const progress = config.call?.progress
      ? (p: ToolProgress) => io.err(`[${p.progress}] ${p.message}\n`)
      : undefined
    const session = config.call?.session ?? 'cli'
    const answer = await tool.call(args, {
      sessionId: session,
      signal: stop.signal,
      ...(progress ? { progress } : {}),
    })
    const result = await stoppedOnExit(answer, composed, session, io)
    const text = result.content.map((c) => c.text).join('\n')
    if (text.length > 0) io.out(text.endsWith('\n') ? text : `${text}\n`)
    if (stop.signal.aborted) return 130
    return result.isError ? 1 : 0
  } finally {
    stop.off()
    await composed.kernel.dispose()
  }
}

/**
 * A stream still running at the end of `--yield-ms` cannot be followed from here: the task ends
 * with this command. Instead of the model's placeholder (which says how to follow it), the task is
 * stopped with its declared cancel and the answer is what it produced, with a note on stderr.
 */
async function stoppedOnExit(
  result: ToolResult,
  composed: Composed,
  session: string,
  io: Io,
): Promise<ToolResult> {
  const answer = result.structuredContent as { status?: string; task?: string; process?: string } | undefined
  if (answer?.status === 'running' && answer.process !== undefined && answer.task === undefined) {
    return stoppedService(result, composed, { session, handle: answer.process }, io)
  }
  const task = answer?.task
  if (answer?.status !== 'running' || task === undefined) return result
  const exit = await composed.tasks.cancel(task, session)
  const { events, total } = composed.tasks.page(task, session, { offset: 0, max: Number.MAX_SAFE_INTEGER })
  const info = composed.tasks.get(task, session)
  io.err(
    `toolvisor call: ${visibleLine(info.tool)} was still running after --yield-ms; a task cannot outlive this command, so it was stopped (${exit.signal ?? `exit code ${exit.code}`}) after ${eventsText(total)}. To follow a stream, serve it with toolvisor mcp, or leave out --yield-ms.\n`,
  )
  const body = events.map((e) => e.value)
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: false, structuredContent: body }
}

/**
 * A service started here cannot outlive this command either: the answer is its handle, as the
 * model would get it; the service is then stopped with its declared cancel, said on stderr.
 */
async function stoppedService(
  result: ToolResult,
  composed: Composed,
  { session, handle }: { readonly session: string; readonly handle: string },
  io: Io,
): Promise<ToolResult> {
  const exit = await composed.tasks.cancel(handle, session)
  const total = composed.tasks.process(handle, session).output.counters().events
  io.err(
    `toolvisor call: ${visibleLine(handle)} is a service, which cannot outlive this command: it was stopped with its declared cancel (${exit.signal ?? `exit code ${exit.code}`}) after ${eventsText(total)}. To keep it running and talk to it, serve it with toolvisor mcp.\n`,
  )
  return result
}

/** ARGS_JSON as an object (default `{}`), or why it is not one. */
function argsOf(json: string | undefined): Record<string, unknown> | string {
  if (json === undefined) return {}
  let args: unknown
  try {
    args = JSON.parse(json)
  } catch (error) {
    return `ARGS_JSON is not JSON: ${(error as Error).message}; pass an object such as '{"path":"x"}'`
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return `ARGS_JSON must be a JSON object, got ${Array.isArray(args) ? 'an array' : JSON.stringify(args)}`
  return args as Record<string, unknown>
}

/** The tool to call: the only one, or the `--command` one; or why there is none. */
function pick(loaded: LoadedTool, tools: readonly Tool[], command: string | undefined): Tool | string {
  const commands = loaded.spec.commands.map((c) => c.name).join(', ')
  if (command === undefined) {
    return tools.length === 1
      ? tools[0]!
      : `${loaded.spec.slug} has commands (${commands}): pass --command NAME`
  }
  const wanted = `${loaded.spec.slug}.${command}`
  return (
    tools.find((t) => t.name === wanted) ??
    `${loaded.spec.slug} has no command "${command}"; its commands: ${commands || '(none)'}`
  )
}

/** `1 event`, `3 events`. */
const eventsText = (n: number): string => `${n} event${n === 1 ? '' : 's'}`
