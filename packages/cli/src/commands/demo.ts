import { accessSync, appendFileSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Sessions } from '@toolvisor/tasks'
import type { ToolCallContext, ToolRegistry, ToolResult } from '@toolvisor/toolbox'
import type { Config } from '../config.js'
import { compose } from '../internal/compose.js'
import { configFileOf, configOf, parseLine, usageOf } from '../internal/flags.js'
import { human, type Io } from '../output.js'

/** `toolvisor demo --help`. */
export const DEMO_USAGE = usageOf(
  'demo',
  `usage: toolvisor demo [--toolbox DIR] [flags]

A guided run of the runtime on the example tools (default ./examples/tools): loading a toolbox
with a broken tool in it, the argument modes of v1, a jsonl oneshot with an invalid event, a
stream that outlives its call and is followed, read and stopped through the processes tool, the
session fence, sub-commands and help, and a service (log_watcher) started twice, talked to and
stopped, its output arriving as mail.`,
)

/** What every step of the demo uses. */
interface Demo {
  readonly tools: ToolRegistry
  readonly sessions: Sessions
  readonly scratch: string
  readonly alice: ToolCallContext
  say(line?: string): void
  show(result: ToolResult): void
  call(name: string, args: unknown, ctx?: ToolCallContext): Promise<ToolResult>
}

/** `toolvisor demo`: the README's main job. */
export async function demoCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values } = parseLine('demo', argv, DEMO_USAGE)
  if (values.help) {
    io.out(`${DEMO_USAGE}\n`)
    return 0
  }
  const config = configOf('demo', values)
  const examples = config.toolboxes.length > 0 ? config.toolboxes : [resolve('examples/tools')]
  const scratch = mkdtempSync(join(tmpdir(), 'toolvisor-demo-'))
  const broken = brokenToolbox(scratch)
  const began = Date.now()
  const composed = await compose(
    { ...config, toolboxes: [...examples, broken], stateDir: config.stateDir ?? join(scratch, 'state') },
    { yieldMs: 1000, configFile: configFileOf(values) },
  )
  const demo = demoOf(composed, scratch, io)
  // Ctrl-C: what it started is stopped and its folder removed, as at its end.
  const interrupted = () =>
    void composed.kernel.dispose().finally(() => {
      rmSync(scratch, { recursive: true, force: true })
      process.exit(130)
    })
  process.once('SIGINT', interrupted)
  try {
    loading(demo, examples, Date.now() - began)
    await oneshots(demo)
    await stream(demo)
    await commandsAndErrors(demo)
    const files = await services(demo)
    await talkToServices(demo, files)
    demo.say(`Next: ${nextCommand(examples)}`)
    return 0
  } finally {
    process.off('SIGINT', interrupted)
    await composed.kernel.dispose()
    rmSync(scratch, { recursive: true, force: true })
  }
}

/**
 * The command that serves the examples, as this user can type it: `toolvisor` when it is on PATH,
 * else this build's `bin.js` run by node, with how to put it on PATH.
 */
function nextCommand(examples: Config['toolboxes']): string {
  const toolboxes = examples
    .map((box) => `--toolbox ${shellWord(typeof box === 'string' ? box : box.path)}`)
    .join(' ')
  // The folders npm and pnpm put first for a script (`npm run demo`) are not the user's PATH.
  const userPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !/(node_modules\/\.bin|node-gyp-bin)$/.test(dir))
  const onPath = userPath.some((dir) => {
    try {
      accessSync(join(dir, 'toolvisor'), constants.X_OK)
      return dir !== ''
    } catch {
      return false
    }
  })
  const serve = 'serve them to Claude Code, Codex, any MCP client'
  if (onPath) return `toolvisor mcp ${toolboxes}  (${serve})`
  const bin = fileURLToPath(new URL('../bin.js', import.meta.url))
  return `node ${shellWord(bin)} mcp ${toolboxes}  (${serve}; npm run install-cli puts toolvisor on PATH)`
}

/** A path as a shell takes it whole: quoted when it holds a space or anything a shell reads. */
const shellWord = (word: string): string =>
  /^[\w./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

/** A toolbox holding one tool whose describe document is wrong, and a note file to read. */
function brokenToolbox(scratch: string): string {
  const broken = join(scratch, 'broken-toolbox')
  writeFileSync(join(scratch, 'notes.txt'), 'remember the milk\n')
  mkdirSync(broken)
  writeFileSync(
    join(broken, 'half-written'),
    '#!/bin/sh\necho \'{"slug": "half_written", "description": 3}\'\n',
    {
      mode: 0o755,
    },
  )
  return broken
}

function demoOf(
  { tools, sessions }: { readonly tools: ToolRegistry; readonly sessions: Sessions },
  scratch: string,
  io: Io,
): Demo {
  const say = (line = '') => io.out(`${line}\n`)
  const alice: ToolCallContext = { sessionId: 'alice', signal: new AbortController().signal }
  return {
    tools,
    sessions,
    scratch,
    alice,
    say,
    show(result) {
      const text = result.content
        .map((c) => c.text)
        .join('\n')
        .trimEnd()
      say(`   ${result.isError ? 'error' : 'result'}: ${shown(text).replaceAll('\n', '\n           ')}`)
    },
    call(name, args, ctx = alice) {
      say(`   call ${tools.safeName(name)} ${JSON.stringify(args)}`)
      return tools.call(name, args, ctx)
    },
  }
}

/** At most this many characters of one result, or of one item of a listing result. */
const SHOWN = 600

/**
 * A result as the demo prints it: shortened to {@link SHOWN} characters, except that a listing
 * (`{"mail": [...]}`, `{"processes": [...]}`) shows each item on its own line, shortened on its own,
 * so that which mail happened to arrive first never decides what can be seen.
 */
export function shown(text: string): string {
  const cut = (part: string) => (part.length > SHOWN ? `${part.slice(0, SHOWN)}…` : part)
  const listing = listingOf(text)
  if (listing === undefined) return cut(text)
  const [key, items] = listing
  return [
    `{"${key}":[`,
    ...items.map((item, i) => `  ${cut(JSON.stringify(item))}${i < items.length - 1 ? ',' : ''}`),
    ']}',
  ].join('\n')
}

function listingOf(text: string): readonly [string, readonly unknown[]] | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined
  const entries = Object.entries(parsed)
  const [only] = entries
  if (entries.length !== 1 || only === undefined || !Array.isArray(only[1]) || only[1].length === 0)
    return undefined
  return [only[0], only[1]]
}

function loading({ say, tools }: Demo, examples: Config['toolboxes'], ms: number): void {
  say('toolvisor demo: tools as processes, as a model sees and calls them.')
  say()
  say(
    `1. Loading ${examples.map((e) => (typeof e === 'string' ? e : e.path)).join(', ')} and a toolbox with a broken tool (describe runs for every`,
  )
  say('   executable in parallel; one bad tool never blocks the others)')
  say(
    `   served in ${ms} ms: ${tools
      .list()
      .map((t) => tools.safeName(t.name))
      .join(', ')}`,
  )
  for (const report of tools.loadErrors()) say(`   not loaded: ${human(report.message, '     ')}`)
  say()
}

async function oneshots({ say, show, call, scratch }: Demo): Promise<void> {
  say('2. A v1 tool with one argument of each mode (positional, --name value, --name=value, stdin, env)')
  show(
    await call('echo_args', {
      path: join(scratch, 'notes.txt'),
      pattern: 'ERROR',
      limit: 3,
      note: 'from stdin',
      'api-token': 'demo-token',
    }),
  )
  say()
  say('3. A v2 oneshot with jsonl framing and an event schema; a line that does not match is an')
  say('   invalid event in the result, never dropped')
  show(await call('file_stats', { path: scratch, bad: true }))
  say()
}

async function stream({ say, show, call, tools, alice }: Demo): Promise<void> {
  say('4. A stream: each event arrives as progress; after the yield window (1 s here) the call')
  say('   answers with a running placeholder, and the task keeps running')
  let shown = 0
  const progress = (p: { progress: number; message: string }) => {
    if (shown++ < 3) say(`   progress ${p.progress}: ${p.message}`)
  }
  show(await tools.call('counter', { to: 1000, 'every-ms': 100 }, { ...alice, progress }))
  say('   ... then, through the shared processes tool:')
  show(await call('processes', { command: 'tail', process: 't1', n: 3 }))
  say()
  say('5. The session fence: another session cannot read, stop or even see it')
  const bob: ToolCallContext = { sessionId: 'bob', signal: new AbortController().signal }
  show(await call('processes', { command: 'list' }, bob))
  show(await call('processes', { command: 'stop', process: 't1' }, bob))
  say('   its owner stops it (declared cancel SIGTERM, SIGKILL after timeout.stop):')
  show(await call('processes', { command: 'stop', process: 't1' }))
  say()
}

async function commandsAndErrors({ say, show, call }: Demo): Promise<void> {
  say('6. One binary, several tools (commands), and longer help on demand')
  show(await call('git_lite.log', { dir: resolve('.'), n: 3 }))
  const help = await call('help', { tool: 'git_lite__log' })
  show({
    ...help,
    content: [{ type: 'text', text: help.content[0]?.text.split('\n').slice(0, 3).join('\n') ?? '' }],
  })
  say()
  say('7. Bad input gets a clear error and runs nothing')
  show(await call('echo_args', { path: ['not', 'a', 'string'], pattern: 'x', limit: 1, note: 'n' }))
  say()
}

/** Two log files, and log_watcher started on each: two handles. */
async function services({ say, show, call, scratch }: Demo): Promise<readonly [string, string]> {
  say('8. A service: log_watcher follows a file and stays running; each start is a new process with')
  say('   its own handle (p1, p2, ...), returned once it is ready')
  const files = [join(scratch, 'app.log'), join(scratch, 'db.log')] as const
  for (const file of files) writeFileSync(file, 'an old ERROR, before the watch\n')
  show(await call('log_watcher', { file: files[0], pattern: 'ERROR' }))
  show(await call('log_watcher', { file: files[1], pattern: 'ERROR' }))
  appendFileSync(files[0], 'ERROR disk full\nall fine\n')
  appendFileSync(files[1], 'ERROR replica lag\nWARN slow query\n')
  say('   lines are appended to both files; the matching ones arrive as mail from their process')
  say('   (digested every 2 s, as log_watcher declares); processes wait blocks until mail comes')
  say("   (here: from p1), then hands over all the mail waiting, the counter task's end included:")
  show(await call('processes', { command: 'wait', process: 'p1', timeout_seconds: 10 }))
  say()
  return files
}

/** Talking to one watcher, listing both, stopping one, and the session's close stopping the other. */
async function talkToServices(
  { say, show, call, sessions }: Demo,
  files: readonly [string, string],
): Promise<void> {
  say('9. log_watcher.send talks to one process by its handle; the event is checked against the')
  say("   tool's input schema first (a bad one is refused, nothing written)")
  show(await call('log_watcher.send', { process: 'p1', event: { op: 'pattern', value: 'WARN' } }))
  show(await call('log_watcher.send', { process: 'p1', event: { op: 'louder' } }))
  appendFileSync(files[0], 'WARN cache cold\nERROR not reported any more by p1\n')
  appendFileSync(files[1], 'WARN replica slow\nERROR replica down\n')
  show(await call('processes', { command: 'wait', process: 'p2', timeout_seconds: 10 }))
  show(await call('processes', { command: 'list' }))
  say('   stop one with its declared cancel (log_watcher declares {"send": {"op": "stop"}}):')
  show(await call('processes', { command: 'stop', process: 'p1' }))
  say('   and closing the session stops every process it still owns:')
  await sessions.close('alice')
  show(await call('processes', { command: 'list' }))
  say()
}
