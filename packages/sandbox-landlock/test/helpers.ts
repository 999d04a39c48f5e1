import type { ChildProcess } from 'node:child_process'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ExtraFd, Launch, SandboxPolicy } from '@toolvisor/process-runtime'
import { spawnLaunch } from '@toolvisor/process-runtime'
import {
  createTestUser,
  eventually,
  processesRunning,
  type TestUser,
} from '@toolvisor/process-runtime/testing'
import { syscallFilter } from '@toolvisor/syscall-filter'
import { afterAll, afterEach, beforeAll } from 'vitest'

export {
  createTestUser,
  eventually,
  processesRunning,
  processesWith,
  type TestUser,
} from '@toolvisor/process-runtime/testing'

/** True when the tests run as root (needed for useradd and the launcher's --user). */
export const isRoot = process.geteuid?.() === 0

/** The interpreter of the node probe tools; granted read-only when it lives outside /usr. */
export const node = realpathSync(process.execPath)
export const nodeOutsideUsr = !node.startsWith('/usr/')

const dirs: string[] = []

/**
 * Where test directories go: not under /tmp, which every tool with the default `tmp: shared` may
 * read and write, so it would hide what a grant does.
 */
const base = existsSync('/var/tmp') ? '/var/tmp' : tmpdir()

/** A fresh directory (mode 0755 so a run_as user can reach it), removed by `removeTempDirs`. */
export function tempDir(prefix = 'tv-landlock-'): string {
  const dir = realpathSync(mkdtempSync(join(base, prefix)))
  chmodSync(dir, 0o755)
  dirs.push(dir)
  return dir
}

/** Removes every directory `tempDir` made. */
export function removeTempDirs(): void {
  closeFilterFds()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** Writes an executable file. */
export function writeTool(path: string, text: string): string {
  writeFileSync(path, text)
  chmodSync(path, 0o755)
  return path
}

/** python3 is what calls truncate(2) for the probe tool. */
export const hasPython = existsSync('/usr/bin/python3')

/**
 * A node tool that runs the operations given as JSON in argv[2] and prints one JSON object:
 * per key, the result or the error code (EACCES, EPERM, ...).
 */
export const probeSource = `#!${node}
import fs from 'node:fs'
import net from 'node:net'
import dgram from 'node:dgram'
import { spawnSync } from 'node:child_process'
const truncatePy = 'import os, sys, errno\\ntry:\\n  os.truncate(sys.argv[1], 0); print("ok")\\nexcept OSError as e:\\n  print(errno.errorcode[e.errno])'
const out = {}
const ops = {
  read: (p) => fs.readFileSync(p, 'utf8'),
  write: (p, data) => (fs.writeFileSync(p, data ?? 'written'), 'ok'),
  // truncate(2) by path: node has no binding for it (fs.truncate opens for writing first)
  truncate: (p) => spawnSync('/usr/bin/python3', ['-c', truncatePy, p], { encoding: 'utf8' }).stdout.trim(),
  rename: (p, to) => (fs.renameSync(p, to), 'ok'),
  readdir: (p) => fs.readdirSync(p).sort(),
  stat: (p) => fs.statSync(p).size,
  setuid0: () => (process.setuid(0), 'ok'),
  ids: () => ({ uid: process.getuid(), gid: process.getgid(), groups: process.getgroups() }),
  kill: (pid) => (process.kill(Number(pid), 0), 'ok'),
  tcp: (port) => new Promise((resolve, reject) => {
    const s = net.connect(Number(port), '127.0.0.1', () => { s.destroy(); resolve('ok') })
    s.on('error', reject)
  }),
  unix: (path) => new Promise((resolve, reject) => {
    const s = net.connect(path, () => { s.destroy(); resolve('ok') })
    s.on('error', reject)
  }),
  udp: (port) => new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4')
    s.on('error', reject)
    s.send('x', Number(port), '127.0.0.1', (e) => { s.close(); e ? reject(e) : resolve('ok') })
  }),
}
for (const [key, op, ...args] of JSON.parse(process.argv[2])) {
  try { out[key] = await ops[op](...args) } catch (e) { out[key] = e.code ?? String(e) }
}
process.stdout.write(JSON.stringify(out))
`

/** A tool directory holding the node probe tool. */
export function probeTool(): { dir: string; file: string } {
  const dir = tempDir('tv-landlock-tool-')
  return { dir, file: writeTool(join(dir, 'probe.mjs'), probeSource) }
}

/** A policy with the defaults a tool that declares nothing would get. */
export function policyFor(
  toolDir: string,
  executable: string,
  overrides: Partial<Omit<SandboxPolicy, 'toolDir' | 'executable'>> = {},
): SandboxPolicy {
  const read = [...(overrides.read ?? []), ...(nodeOutsideUsr ? [node] : [])]
  return {
    toolDir,
    executable,
    write: [],
    net: 'host',
    tmp: 'shared',
    declared: [],
    pins: {},
    ...overrides,
    read,
  }
}

/** A launch of `file args` in `cwd`, with a small environment. */
export function launchOf(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Launch {
  return {
    file,
    args,
    env: { PATH: `${dirname(node)}:/usr/local/bin:/usr/bin:/bin`, LANG: 'C', ...env },
    cwd: '/',
    extraFds: [],
  }
}

const groups = new Set<number>()

/**
 * Spawns the launch as the runtime does (its own `spawnLaunch`: own process group, grant
 * descriptors opened and passed); the group is tracked for cleanup.
 */
export function start(launch: Launch): ChildProcess {
  const { child } = spawnLaunch(launch)
  child.stdin?.end()
  if (child.pid !== undefined) groups.add(child.pid)
  return child
}

/** What a finished process gave. */
export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Collects the output of a started process until it exits. */
export function finish(child: ChildProcess, timeoutMs = 15_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const timer = setTimeout(
      () => reject(new Error(`process ${child.pid} still running after ${timeoutMs} ms`)),
      timeoutMs,
    )
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Starts and waits. */
export function run(launch: Launch): Promise<Finished> {
  return finish(start(launch))
}

/** Resolves with the first stdout chunk that contains `text`. */
export function waitForOutput(child: ChildProcess, text: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = ''
    const timer = setTimeout(
      () => reject(new Error(`no "${text}" within ${timeoutMs} ms; got "${seen}"`)),
      timeoutMs,
    )
    child.stdout?.on('data', (d: Buffer | string) => {
      seen += d.toString()
      if (seen.includes(text)) {
        clearTimeout(timer)
        resolve()
      }
    })
  })
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/** Kills every process group `start` made and returns the groups that were still alive before. */
export async function killStarted(): Promise<number[]> {
  const alive = [...groups].filter(groupAlive)
  for (const pgid of alive) {
    try {
      process.kill(-pgid, 'SIGKILL')
    } catch {
      // exited meanwhile
    }
  }
  for (const pgid of alive) await eventually(() => !groupAlive(pgid), 2_000)
  const left = [...groups].filter(groupAlive)
  groups.clear()
  if (left.length > 0) throw new Error(`process groups still alive after SIGKILL: ${left.join(', ')}`)
  return alive
}

/** The filter programs the mechanism gives the launcher (ipc: host, Landlock has no IPC namespace). */
export const filters = {
  host: syscallFilter({ net: 'host', ipc: 'host' }),
  none: syscallFilter({ net: 'none', ipc: 'host' }),
  stream: syscallFilter({ net: 'stream', ipc: 'host' }),
}

/** A program that allows every call (one `ret ALLOW`): for tests of a wall behind the filter. */
export const ALLOW_ALL = new Uint8Array([0x06, 0, 0, 0, 0, 0, 0xff, 0x7f])

/** The program as a launch's descriptor 3, for launches whose arguments say `--seccomp-fd 3` (`FILTER_ARGS`). */
export const filterFd = { kind: 'data', data: filters.host } as const

/** The launcher's flag for `filterFd` (or `filterStdio`), first among its arguments. */
export const FILTER_ARGS = ['--seccomp-fd', '3'] as const

let filterPath: string | undefined
const opened: number[] = []

/**
 * stdio for spawn/spawnSync of the launcher with its program on descriptor 3 (`FILTER_ARGS`),
 * read from a file (each call opens it anew: the launcher reads it to its end).
 */
export function filterStdio(
  std: 'pipe' | 'ignore' = 'pipe',
  program: Uint8Array = filters.host,
): ['pipe' | 'ignore', 'pipe' | 'ignore', 'pipe' | 'ignore', number] {
  let path = filterPath
  if (program !== filters.host || path === undefined) {
    path = join(tempDir('tv-landlock-filter-'), 'program')
    writeFileSync(path, program, { mode: 0o644 })
    if (program === filters.host) filterPath = path
  }
  const fd = openSync(path, 'r')
  opened.push(fd)
  return [std, std, std, fd]
}

/** Closes what `filterStdio` opened (after the spawns that inherited it; `removeTempDirs` does). */
function closeFilterFds(): void {
  for (const fd of opened.splice(0)) closeSync(fd)
}

/** How a test gives the launcher its program: a variant, raw bytes, or nothing (no --seccomp-fd). */
export type Given = keyof typeof filters | Uint8Array | 'absent'

/**
 * The launch of `launcher args` (env: only what is given) with the filter on descriptor 3, as the
 * mechanism passes it: `--seccomp-fd 3`, after `--max-abi N`, which must come first.
 */
export function launcherRun(
  launcher: string,
  args: readonly string[],
  env: Record<string, string> = {},
  given: Given = 'host',
): Launch {
  const extraFds: ExtraFd[] = []
  let full = [...args]
  if (given !== 'absent') {
    extraFds.push({ kind: 'data', data: typeof given === 'string' ? filters[given] : given })
    const at = args[0] === '--max-abi' ? 2 : 0
    full = [...args.slice(0, at), '--seccomp-fd', '3', ...args.slice(at)]
  }
  return { file: launcher, args: full, env: { PATH: '/usr/bin:/bin', ...env }, cwd: '/', extraFds }
}

/**
 * The review's life.sh (2026-12-01, Appendix B) as a tool: seven sleeps numbered `<tag>1` to
 * `<tag>7`, started every way the report tried to leave the run (setsid, a subshell, nohup and
 * disown, `env -i`, perl `%ENV=()`, `exec -a` + `env -i`, python's environ cleared + double fork
 * + setsid), then a wait until the file `$2` exists (the test makes it: no fixed sleep). With a
 * third argument `term`, it ignores SIGTERM (a tool the runtime ends up killing).
 */
export const lifeSource = `#!/bin/bash
T=$1; GO=$2
[ "$3" = term ] && trap '' TERM
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

/** A tool directory holding the life.sh tool. */
export function lifeTool(): { dir: string; file: string } {
  const dir = tempDir('tv-landlock-life-')
  return { dir, file: writeTool(join(dir, 'life.sh'), lifeSource) }
}

const tags: string[] = []

/** A fresh tag for the sleeps of one life.sh run (their seconds: months, never reached). */
export function lifeTag(): string {
  const tag = String(100_000 + Math.floor(Math.random() * 900_000))
  tags.push(tag)
  return tag
}

/**
 * Which of the seven sleeps of `tag` are alive (1..7), found by command line (argv exactly
 * [sleep, <tag>N]): the run's marker is what they shed.
 */
export function sleepsAlive(tag: string): number[] {
  return sleepPids(tag)
    .map(([, n]) => n)
    .sort()
}

function sleepPids(tag: string): Array<[number, number]> {
  const found: Array<[number, number]> = []
  const pattern = new RegExp(`^${tag}([1-7])$`)
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').slice(0, -1)
      const n = argv.length === 2 ? pattern.exec(argv[1]!)?.[1] : undefined
      if (n !== undefined) found.push([pid, Number(n)])
    } catch {
      // exited meanwhile
    }
  }
  return found
}

/**
 * Kills (by pid) every sleep a life.sh run of this file left, and whatever names its tag (a loop
 * that starts them): one failing test must not leak.
 */
export function killSleeps(): void {
  for (const tag of tags.splice(0)) {
    for (const pid of [...processesRunning(tag), ...sleepPids(tag).map(([pid]) => pid)]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  }
}

/**
 * A wrapper that runs the built launcher with unshare(2) refused (EPERM) by a seccomp filter, as a
 * container's seccomp profile refuses it: the launcher cannot make a namespace under it. python3
 * installs the filter (no compiler needed), then execs the launcher with the same arguments.
 */
export function unshareRefused(launcher: string): string {
  const source = `#!/usr/bin/python3
import ctypes, os, platform, struct, sys
arch, unshare = {"x86_64": (0xC000003E, 272), "aarch64": (0xC00000B7, 97)}[platform.machine()]
def insn(code, jt, jf, k): return struct.pack("<HBBI", code, jt, jf, k)
program = b"".join([
    insn(0x20, 0, 0, 4),           # load the architecture
    insn(0x15, 0, 3, arch),        # another one: allow
    insn(0x20, 0, 0, 0),           # load the call number
    insn(0x15, 0, 1, unshare),     # unshare: EPERM
    insn(0x06, 0, 0, 0x00050001),
    insn(0x06, 0, 0, 0x7FFF0000),
])
buffer = ctypes.create_string_buffer(program, len(program))
class Program(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(Program(len(program) // 8, ctypes.addressof(buffer))), 0, 0) != 0:
    sys.exit("unshare-refused: seccomp: " + os.strerror(ctypes.get_errno()))
os.execv(${JSON.stringify(launcher)}, [${JSON.stringify(launcher)}] + sys.argv[1:])
`
  return writeTool(join(tempDir('tv-landlock-refused-'), 'launcher'), source)
}

/** Resolves when the child exits (not when its pipes close: what it left may hold them). */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode })
      return
    }
    child.once('exit', (code, signal) => resolve({ code, signal }))
  })
}

/**
 * The lifecycle of a test file that runs the launcher: a real user to switch to when root (made
 * once, removed at the end), every process group it started killed after each test, its temporary
 * directories removed at the end. Returns the user, once made (undefined when not root).
 */
export function launcherLifecycle(prefix: string): () => TestUser | undefined {
  let user: TestUser | undefined
  beforeAll(() => {
    if (isRoot) user = createTestUser(prefix)
  })
  afterEach(async () => {
    await killStarted()
  })
  afterAll(() => {
    user?.remove()
    removeTempDirs()
  })
  return () => user
}
