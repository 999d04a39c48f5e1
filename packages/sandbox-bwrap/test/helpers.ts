import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, copyFileSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Launch, ProcessControl, SandboxMechanism, SandboxPolicy } from '@toolvisor/process-runtime'
import { spawnLaunch } from '@toolvisor/process-runtime'
import { processesWith } from '@toolvisor/process-runtime/testing'

export { createTestUser, type TestUser } from '@toolvisor/process-runtime/testing'

/** Every process a test starts carries this variable, so the suite can prove none is left behind. */
export const MARK = `TVBW_TEST_MARK=${randomUUID()}`
const [markName, markValue] = MARK.split('=') as [string, string]

export const isRoot = process.geteuid?.() === 0
export const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

/** A fresh tool directory under /tmp (mode 0755, so a run_as user can enter it), real path. */
export function toolDir(prefix = 'tvbw-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  chmodSync(dir, 0o755)
  return dir
}

/** Copies the probe tool into `dir` as `probe`. */
export function installProbe(dir: string): string {
  const path = join(dir, 'probe')
  copyFileSync(fixture('probe.py'), path)
  chmodSync(path, 0o755)
  return path
}

/** Writes an executable shell script into `dir`. */
export function script(dir: string, name: string, body: string): string {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}

/**
 * A policy as the runtime hands it over (paths absolute and real). `tmp` defaults to private here
 * (the runtime's default is shared): the test directories live in /tmp, and a shared /tmp would
 * show them all.
 */
export function policy(dir: string, executable: string, over: Partial<SandboxPolicy> = {}): SandboxPolicy {
  return {
    toolDir: dir,
    executable,
    read: [],
    write: [],
    net: 'host',
    tmp: 'private',
    declared: [],
    pins: {},
    ...over,
  }
}

/** The launch the runtime builds for a tool, before any mechanism wraps it. */
export function launchOf(file: string, args: readonly string[], cwd: string): Launch {
  return { file, args, env: { PATH: '/usr/bin:/bin', LC_ALL: 'C', [markName]: markValue }, cwd, extraFds: [] }
}

/** A started process, as the runtime holds it. */
export interface Started {
  readonly child: ChildProcess
  readonly control: ProcessControl | undefined
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Resolves once stdout contains `text`. */
  readonly waitFor: (text: string, ms?: number) => Promise<void>
}

const started: ChildProcess[] = []

/**
 * Spawns a wrapped launch the way the runtime does (its own `spawnLaunch`: detached, `file`
 * descriptors opened and passed, `data` ones written), then `control(child)`.
 */
export function start(launch: Launch, mechanism: SandboxMechanism | undefined): Started {
  const { child, pipes } = spawnLaunch(launch)
  started.push(child)
  child.stdin?.end()
  const extraFds = pipes as readonly (Readable | undefined)[]
  const control = child.pid === undefined ? undefined : mechanism?.control?.({ pid: child.pid, extraFds })
  let stdout = ''
  let stderr = ''
  const waiters: (() => void)[] = []
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    for (const wake of waiters) wake()
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal }))
  })
  const waitFor = (text: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`no "${text}" on stdout after ${ms} ms; stdout: ${stdout}; stderr: ${stderr}`)),
        ms,
      )
      const check = () => {
        if (!stdout.includes(text)) return
        clearTimeout(timer)
        resolve()
      }
      waiters.push(check)
      check()
    })
  return { child, control, stdout: () => stdout, stderr: () => stderr, exited, waitFor }
}

/** One line of the probe tool's output. */
export interface ProbeLine {
  readonly op: string
  readonly ok: boolean
  readonly errno?: string
  readonly value?: unknown
}

/** Runs a wrapped launch to its end (killing it after `ms`), with the probe's lines parsed by op. */
export async function run(launch: Launch, mechanism: SandboxMechanism | undefined, ms = 15_000) {
  const proc = start(launch, mechanism)
  const timer = setTimeout(() => killGroup(proc.child.pid), ms)
  const { code, signal } = await proc.exited
  clearTimeout(timer)
  const lines = new Map<string, ProbeLine>()
  for (const line of proc.stdout().split('\n')) {
    if (!line.startsWith('{')) continue
    const parsed = JSON.parse(line) as ProbeLine
    lines.set(parsed.op, parsed)
  }
  return {
    code,
    signal,
    stdout: proc.stdout(),
    stderr: proc.stderr(),
    lines,
    probe: (op: string) => lines.get(op),
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** The pids of live processes carrying {@link MARK}. */
export function marked(): number[] {
  return processesWith(markName, markValue)
}

/** Waits until no marked process remains (up to `ms`); returns what is still there. */
export async function settle(ms = 3000): Promise<number[]> {
  const until = Date.now() + ms
  let left = marked()
  while (left.length > 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    left = marked()
  }
  return left
}

/** For `afterEach`: kills every group this file started, then returns the marked processes still alive. */
export async function cleanup(): Promise<number[]> {
  for (const child of started.splice(0)) killGroup(child.pid)
  const left = await settle()
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  }
  return left
}
