import type { ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ExtraFd, Launch, SandboxPolicy } from '@toolvisor/process-runtime'
import { spawnLaunch } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { syscallFilter } from '@toolvisor/syscall-filter'

export { createTestUser, eventually, processesWith, type TestUser } from '@toolvisor/process-runtime/testing'

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
