/**
 * F5 of the 2026-12-01 review (issue 26 point 6) and the /proc leak beside it, tried the way the
 * attacker tried them, under `--sandbox landlock`, through the CLI:
 * - a tool (`toolvisor call`) or a read-only bash command (`toolvisor mcp --bash`, a real MCP
 *   client) runs the report's life.sh: `setsid sleep`, `( setsid sleep & )`, `nohup` + `disown`,
 *   `setsid env -i sleep`, perl `%ENV=()`, `exec -a` + `env -i`, python `os.environ.clear()` +
 *   double fork + `setsid`. Those that shed the run's marker used to outlive the call, the session
 *   and the runtime. After the call returns (or the runtime is killed -9 mid-call), none may live.
 *   The strays are found by their unique sleep argument in /proc/PID/cmdline: the marker is what
 *   they shed.
 * - a read-only bash command reads `/`, /proc included: it must not see another host process's
 *   command line (where the launcher can make a pid namespace, which this host allows), and `ps`
 *   shows only the command's own processes.
 * As root (tools run as the sandbox user) and as an ordinary user (as-user.ts: toolvisor under the
 * user's own login, tools as that user).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomInt, randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs, userDir } from './as-user.js'
import { bin, eventually } from './helpers.js'
import { dir, isRoot, sandboxedTool } from './sandbox-helpers.js'

/** What each test started and must not leave: children by pid, sleeps by tag, directories. */
const children: ChildProcess[] = []
const tags: string[] = []
const made: string[] = []
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  // Whatever a failing test left: killed by pid, so that one failure does not leak into the host.
  for (const tag of tags.splice(0)) for (const pid of strays(tag)) kill(pid)
  for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true })
})

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone meanwhile
  }
}

/** A fresh tag: the leading digits of every sleep of one life.sh run (seconds: days, never reached). */
function freshTag(): string {
  const tag = String(randomInt(100_000, 999_999))
  tags.push(tag)
  return tag
}

/**
 * The report's life.sh (Appendix B), with the sleeps numbered `<tag>1` to `<tag>7`, then a wait
 * for `$2` to exist (the test creates it once it saw all seven alive: no fixed sleep).
 */
const LIFE = `T=$1; GO=$2
setsid sleep \${T}1 &
( setsid sleep \${T}2 & )
nohup sleep \${T}3 >/dev/null 2>&1 & disown
setsid env -i /usr/bin/sleep \${T}4 &
setsid /usr/bin/perl -e '$0="x"; %ENV=(); exec {"/usr/bin/sleep"} "sleep", "'\${T}5'"' &
( exec -a tvsleep env -i bash -c 'exec -a tvsleep906 sleep '\${T}6 & )
setsid /usr/bin/python3 -c 'import os,time
os.environ.clear()
if os.fork()==0:
  os.setsid(); os.execve("/usr/bin/sleep",["sleep","'\${T}7'"],{})' &
while [ ! -e "$GO" ]; do sleep 0.05; done
echo started
`

/** Live processes that are one of the sleeps of `tag`: argv is exactly [sleep-ish, <tag>N]. */
function strays(tag: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1)
      if (argv.length === 2 && new RegExp(`^${tag}[1-7]$`).test(argv[1]!)) found.push(pid)
    } catch {
      // exited meanwhile
    }
  }
  return found
}

/** Which of the seven sleeps of `tag` are alive, by number (1..7). */
function alive(tag: string): number[] {
  return strays(tag)
    .map((pid) => Number(readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[1]!.slice(-1)))
    .sort()
}

/** A tool directory holding life.sh and a tool `life` that runs it (reads its own directory). */
function lifeBox(): { box: string; go: string; script: (tag: string) => string } {
  const box = dir('tv-life-box-')
  writeFileSync(join(box, 'life.sh'), LIFE)
  sandboxedTool(box, 'life', { sandbox: { fs: { read: ['.'] } } })
  const go = join(box, `go-${randomUUID()}`)
  return { box, go, script: (tag) => `/bin/bash ${join(box, 'life.sh')} ${tag} ${go}` }
}

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Collects a child's output until it exits. */
function exited(child: ChildProcess): Promise<Exited> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
}

/** `toolvisor call TOOL {"script": SCRIPT} --sandbox landlock`, as root or as the ordinary user. */
function call(tool: string, script: string, as: 'root' | 'user'): ChildProcess {
  const args = ['call', tool, JSON.stringify({ script }), '--sandbox', 'landlock']
  const child =
    as === 'root'
      ? spawn(process.execPath, [bin, ...args, '--state-dir', dir('tv-life-state-')], {
          stdio: ['ignore', 'pipe', 'pipe'],
        })
      : asUser(process.execPath, [seenAs(bin), ...args, '--state-dir', stateOfUser()])
  children.push(child)
  return child
}

function stateOfUser(): string {
  const state = userDir('.tv-life-state-')
  made.push(state)
  return state
}

/** Waits until all seven sleeps of `tag` run (the attack is in place), then lets the tool end. */
async function whenAllSeven(tag: string, go: string, child: ChildProcess): Promise<void> {
  const running = await eventually(() => alive(tag).length === 7 || child.exitCode !== null, 15_000)
  expect(running && alive(tag), 'the seven sleeps of life.sh run').toEqual([1, 2, 3, 4, 5, 6, 7])
  writeFileSync(go, '')
}

const who = [
  ['root', isRoot ? undefined : 'needs root: as root the tool runs as the sandbox user'],
  ['user', asUserSkip],
] as const

describe('F5: a Landlock tool leaves nothing behind, whatever it sheds (toolvisor call)', () => {
  for (const [as, skip] of who) {
    it.skipIf(skip !== undefined)(
      `as ${as}: after the call returns, none of life.sh's sleeps lives (${skip ?? 'runs here'})`,
      async () => {
        const { box, go, script } = lifeBox()
        const tag = freshTag()
        const child = call(join(box, 'life'), script(tag), as)
        const done = exited(child)
        await whenAllSeven(tag, go, child)
        const result = await done
        expect(result.stdout).toContain('started')
        expect(result.code).toBe(0)
        // The call returned: what the tool started is gone with it (a bound, not a wait).
        await eventually(() => strays(tag).length === 0, 3_000)
        expect(alive(tag), 'sleeps still alive after the call returned').toEqual([])
      },
    )

    it.skipIf(skip !== undefined)(
      `as ${as}: the runtime killed -9 mid-call leaves none of them either (${skip ?? 'runs here'})`,
      async () => {
        const { box, script } = lifeBox()
        const tag = freshTag()
        // The tool never ends by itself: the go file is never made.
        const child = call(join(box, 'life'), script(tag), as)
        const done = exited(child)
        const running = await eventually(() => alive(tag).length === 7 || child.exitCode !== null, 15_000)
        expect(running && alive(tag)).toEqual([1, 2, 3, 4, 5, 6, 7])
        child.kill('SIGKILL')
        expect((await done).signal).toBe('SIGKILL')
        await eventually(() => strays(tag).length === 0, 5_000)
        expect(alive(tag), 'sleeps still alive after the runtime was killed').toEqual([])
      },
    )
  }
})

/**
 * `toolvisor mcp --bash --sandbox landlock --bash-sandbox read-only` in `cwd`, as root or as the
 * ordinary user, with a plain JSON-RPC client on its stdio (what a harness sends).
 */
async function readOnlyBash(cwd: string, as: 'root' | 'user') {
  const args = ['mcp', '--bash', '--sandbox', 'landlock', '--bash-sandbox', 'read-only', '--state-dir']
  const child =
    as === 'root'
      ? spawn(process.execPath, [bin, ...args, dir('tv-life-state-')], {
          cwd,
          stdio: ['pipe', 'pipe', 'pipe'],
        })
      : asUser(process.execPath, [seenAs(bin), ...args, stateOfUser()], { cwd })
  children.push(child)
  const ended = exited(child)
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`)
  const answer = async (id: number): Promise<Record<string, unknown>> => {
    const find = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((m) => m.id === id)
    expect(await eventually(() => find() !== undefined || child.exitCode !== null, 30_000)).toBe(true)
    const found = find()
    if (found === undefined)
      throw new Error(`toolvisor mcp ended without answering ${id}: ${(await ended).stderr}`)
    return found
  }
  const clientInfo = { name: 'lifetime-test', version: '0' }
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo },
  })
  await answer(0)
  send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  let next = 1
  const bash = async (command: string): Promise<string> => {
    const id = next++
    send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'bash', arguments: { command, description: 'Probe' } },
    })
    const { result } = (await answer(id)) as { result: { content: Array<{ text?: string }> } }
    return result.content.map((c) => c.text ?? '').join('\n')
  }
  /** Closes its stdin (the client leaves) and waits for it to exit. */
  const close = async () => {
    child.stdin!.end()
    return ended
  }
  return { bash, close }
}

function existsPid(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A working directory the sandbox user (as root) or the ordinary user may enter, holding life.sh. */
function workDir(as: 'root' | 'user'): string {
  const work = sandboxUserDir(
    import.meta.dirname,
    'life-work',
    as === 'root' ? 'nobody' : ordinaryUser().name,
  )
  made.push(work)
  writeFileSync(join(work, 'life.sh'), LIFE)
  return work
}

/** The names `ps -e` may show inside: the namespace's pid 1 (the launcher) and the command's own. */
const OWN = new Set(['landlock-launch', 'bash', 'ps', 'wc', 'grep'])

describe('F5 and /proc: a read-only bash command under Landlock', () => {
  for (const [as, skip] of who) {
    it.skipIf(skip !== undefined)(
      `as ${as}: after the command returns, and after toolvisor mcp exits, none of life.sh's sleeps lives (${skip ?? 'runs here'})`,
      async () => {
        const work = workDir(as)
        const go = join(work, `go-${randomUUID()}`)
        const tag = freshTag()
        const { bash, close } = await readOnlyBash(work, as)
        const answer = bash(`/bin/bash ${join(work, 'life.sh')} ${tag} ${go}`)
        const running = await eventually(() => alive(tag).length === 7, 15_000)
        expect(running && alive(tag), 'the seven sleeps of life.sh run').toEqual([1, 2, 3, 4, 5, 6, 7])
        writeFileSync(go, '')
        expect(await answer).toContain('started')
        await eventually(() => strays(tag).length === 0, 3_000)
        expect(alive(tag), 'sleeps still alive after the command returned').toEqual([])
        await close()
        await eventually(() => strays(tag).length === 0, 3_000)
        expect(alive(tag), 'sleeps still alive after toolvisor mcp exited').toEqual([])
      },
    )

    it.skipIf(skip !== undefined)(
      `as ${as}: cannot read another host process's command line; ps shows only the command's own processes (${skip ?? 'runs here'})`,
      async () => {
        const secret = `${randomInt(1000, 9999)}.${randomInt(100_000, 999_999)}`
        const outside = spawn('sleep', [secret], { stdio: 'ignore' })
        children.push(outside)
        expect(await eventually(() => existsPid(outside.pid!))).toBe(true)
        const { bash, close } = await readOnlyBash(workDir(as), as)
        // The pattern escapes its dot: the command's own command line does not match it.
        const pattern = secret.replace('.', '\\.')
        const seen = await bash(
          `grep -l -a "${pattern}" /proc/[0-9]*/cmdline 2>/dev/null | wc -l; ps -e -o comm=`,
        )
        await close()
        const [matches, ...names] = seen.trim().split('\n')
        expect(Number(matches), `the command found the outside sleep: ${seen}`).toBe(0)
        expect(
          names.filter((name) => !OWN.has(name)),
          `ps -e showed: ${names.join(', ')}`,
        ).toEqual([])
      },
    )
  }
})

describe('toolvisor check --probe says which applies here', () => {
  it('a Landlock tool: its runs get a pid namespace (this host allows one)', () => {
    const box = dir('tv-life-box-')
    sandboxedTool(box, 'plain', { sandbox: { fs: { read: [] } } })
    const args = [
      'check',
      '--toolbox',
      box,
      '--sandbox',
      'landlock',
      '--probe',
      '--state-dir',
      dir('tv-life-state-'),
    ]
    const table = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
    expect(table.status).toBe(0)
    expect(table.stdout).toContain(
      "sandbox landlock (gaps: pid namespace: strays die with the tool; /proc shows only the tool's processes;",
    )
  })
})
