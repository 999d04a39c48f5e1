import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'
import { type Dirent, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cgroupHost, removeDir } from '../host.js'
import { pidsIn } from './kill.js'

/**
 * A box for tests that could exhaust the host (a fork bomb, a memory hog): a cgroup with a small
 * pids.max and memory limit, made beside toolvisor's own subtree, that a process is put in before
 * it runs anything. A limit of toolvisor's that did not hold would stop at the box.
 */
export interface CgroupBox {
  /** Spawns `file` inside the box (a shell joins it, then execs `file`). */
  spawn(file: string, args: readonly string[], options?: SpawnOptions): ChildProcess
  /** The most processes the box held at once. */
  peak(): number
  /** Forks the box refused (its own limit reached: toolvisor's did not hold). */
  refused(): number
  /** Kills what is left in it and removes it. */
  remove(): void
}

/** Whether boxes can be made here (a pids and a memory controller toolvisor may use), or why not. */
export function boxesHere(): string | undefined {
  const host = cgroupHost(undefined)
  if (!host.available)
    return `no cgroup toolvisor may use here (${host.reason}): needs root or a delegated v2 subtree`
  const controllers = new Set(host.hierarchies.flatMap((h) => [...h.controllers]))
  if (!controllers.has('pids') || !controllers.has('memory'))
    return 'no pids and memory controllers to box the test in'
  return undefined
}

/**
 * A python program that forks up to `n` children (each sleeps 30 s) and prints `refused after N`
 * at the first EAGAIN: the fork bomb of the containment tests (run it in a box).
 */
export function forker(n = 10_000): string {
  return `python3 -c '
import os, time
n = 0
try:
    for i in range(${n}):
        if os.fork() == 0:
            time.sleep(30); os._exit(0)
        n += 1
except BlockingIOError:
    print("refused after", n, flush=True)
'`
}

let boxes = 0

/** A box holding at most `pids` processes and `memory` bytes (defaults 400 and 1 GiB). */
export function box(pids = 400, memory = 1024 * 1024 * 1024): CgroupBox {
  const host = cgroupHost(undefined)
  if (!host.available) throw new Error(host.reason)
  const dirs: { dir: string; controller: string }[] = []
  const name = `tv-box-${process.pid}-${++boxes}`
  for (const hierarchy of host.hierarchies) {
    for (const controller of ['pids', 'memory'] as const) {
      if (!hierarchy.controllers.has(controller)) continue
      const dir = join(hierarchy.version === 1 ? join(hierarchy.base, '..') : hierarchy.base, name)
      mkdirSync(dir)
      dirs.push({ dir, controller })
      if (controller === 'pids') writeFileSync(join(dir, 'pids.max'), String(pids))
      else
        writeFileSync(
          join(dir, hierarchy.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'),
          String(memory),
        )
    }
  }
  const pidsDir = dirs.find((d) => d.controller === 'pids')!.dir
  const files = [...new Set(dirs.map((d) => join(d.dir, 'cgroup.procs')))]
  return {
    spawn: (file, args, options = {}) =>
      spawn(
        '/bin/sh',
        ['-c', 'for f in $TV_BOX; do echo $$ > "$f" || exit 125; done; exec "$@"', 'sh', file, ...args],
        {
          ...options,
          env: { ...(options.env ?? process.env), TV_BOX: files.join(' ') },
        },
      ),
    peak: () => Number(readFileSync(join(pidsDir, 'pids.peak'), 'utf8')),
    refused: () => Number(/max (\d+)/.exec(readFileSync(join(pidsDir, 'pids.events'), 'utf8'))?.[1] ?? 0),
    remove: () => {
      for (const { dir } of dirs) removeTree(dir)
    },
  }
}

function removeTree(dir: string): void {
  // The runtime's watchdog may be removing the same cgroups meanwhile: one that is gone is done.
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  for (const entry of entries) if (entry.isDirectory()) removeTree(join(dir, entry.name))
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let i = 0; i < 2000; i++) {
    for (const pid of pidsIn(dir)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    if (removeDir(dir)) return
    Atomics.wait(pause, 0, 0, 5)
  }
  throw new Error(`the test cgroup ${dir} cannot be removed after 10 s (processes still in it?)`)
}
