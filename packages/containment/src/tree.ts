import { closeSync } from 'node:fs'
import { rmdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { TreeEvents, TreeUsage } from './containment.js'
import {
  type Controller,
  type Hierarchy,
  type KillMethod,
  openHeld,
  read,
  readHeld,
  removeDir,
  writeTo,
} from './host.js'
import { emptied, keyed, killTree, pidsIn } from './internal/kill.js'

/**
 * Removes a tree's cgroups elsewhere (the fork server): how many are still there, undefined when
 * it could not be asked.
 */
export type Remover = (dirs: readonly string[]) => Promise<number | undefined>

/** The cgroups of one launch: what it joins, how it is killed whole, what it used. */
export class Tree {
  /**
   * A tree made ahead: the fork server's answer naming the warm child it made in it (see
   * `ForkServer.warm`), which giving the tree up waits for and kills.
   */
  warmed: Promise<number | undefined> | undefined
  readonly #leaves: Map<Hierarchy, string>
  readonly #kill: KillMethod
  readonly #live: Set<Tree>
  readonly #remover: Remover | undefined
  /** The files its end reads, held open (see `prime`). */
  readonly #held = new Map<string, number>()
  #removed = false

  constructor(leaves: Map<Hierarchy, string>, kill: KillMethod, live: Set<Tree>, remover?: Remover) {
    this.#leaves = leaves
    this.#kill = kill
    this.#live = live
    this.#remover = remover
  }

  /** The v2 leaf, which the launch is born in (clone3 CLONE_INTO_CGROUP), when there is one. */
  get bornIn(): string | undefined {
    for (const [hierarchy, dir] of this.#leaves) if (hierarchy.version === 2) return dir
    return undefined
  }

  /** The `cgroup.procs` files the launch joins before its exec (the v1 hierarchies). */
  procsFiles(): string[] {
    return [...this.#leaves].filter(([h]) => h.version === 1).map(([, dir]) => join(dir, 'cgroup.procs'))
  }

  /** How many leaves it has (one per hierarchy it is in). */
  get leafCount(): number {
    return this.#leaves.size
  }

  /** It has the leaf `dir`. */
  has(dir: string): boolean {
    return [...this.#leaves.values()].includes(dir)
  }

  /** The member leaf (where `cgroup.procs` lists the whole tree). */
  get dir(): string {
    return this.#leaves.values().next().value!
  }

  #of(controller: Controller): { dir: string; version: 1 | 2 } | undefined {
    for (const [hierarchy, dir] of this.#leaves)
      if (hierarchy.controllers.has(controller) || (controller === 'cpuacct' && hierarchy.version === 2))
        return { dir, version: hierarchy.version }
    return undefined
  }

  /** The pids in the tree now. */
  members(): number[] {
    return pidsIn(this.dir)
  }

  /**
   * Kills every process of the tree, whatever it did to its group, session or environment; false
   * when there was none left to kill (most tools leave nothing once their leader is gone).
   */
  async kill(): Promise<boolean> {
    const events = this.#read(join(this.dir, 'cgroup.events'))
    if (events !== undefined ? keyed(events).get('populated') === 0 : this.members().length === 0)
      return false
    await killTree(this.dir, this.#kill, this.#of('freezer')?.dir)
    return true
  }

  /**
   * Opens the files its end reads (populated, the events at its limits, its peaks and cpu time),
   * off the launch path: the first open of a file in a new cgroup makes its inode, several times
   * what a read of an open one costs. Each is read again at its offset 0. None opened (out of
   * descriptors): read by path.
   */
  prime(): void {
    const files = [join(this.dir, 'cgroup.events')]
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const cpu = this.#of('cpuacct')
    if (memory) {
      const v2 = memory.version === 2
      files.push(join(memory.dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'))
      files.push(join(memory.dir, v2 ? 'memory.events' : 'memory.oom_control'))
    }
    if (pids) files.push(join(pids.dir, 'pids.peak'), join(pids.dir, 'pids.events'))
    if (cpu) files.push(join(cpu.dir, cpu.version === 2 ? 'cpu.stat' : 'cpuacct.usage'))
    for (const file of files) {
      const fd = openHeld(file)
      if (fd !== undefined) this.#held.set(file, fd)
    }
  }

  #read(path: string): string | undefined {
    const fd = this.#held.get(path)
    return fd === undefined ? read(path) : readHeld(fd)
  }

  #number(path: string): number | undefined {
    const text = this.#read(path)
    if (text === undefined) return undefined
    const value = Number(text.trim())
    return Number.isFinite(value) ? value : undefined
  }

  #release(): void {
    for (const fd of this.#held.values()) closeSync(fd)
    this.#held.clear()
  }

  /** Resolves once the tree has no process left (bounded: false when some remain). */
  async emptied(): Promise<boolean> {
    return emptied(this.dir)
  }

  /** What the tree uses; `final`: its peaks and cpu time only (what is current lags while the killed are reaped). */
  usage(final = false): TreeUsage {
    const memory = this.#of('memory')
    const pids = this.#of('pids')
    const cpu = this.#of('cpuacct')
    const out: { -readonly [K in keyof TreeUsage]: TreeUsage[K] } = {}
    if (memory !== undefined) {
      const v2 = memory.version === 2
      if (!final)
        assign(out, 'memory', this.#number(join(memory.dir, v2 ? 'memory.current' : 'memory.usage_in_bytes')))
      assign(
        out,
        'memoryPeak',
        this.#number(join(memory.dir, v2 ? 'memory.peak' : 'memory.max_usage_in_bytes')),
      )
    }
    if (pids !== undefined) {
      if (!final) assign(out, 'pids', this.#number(join(pids.dir, 'pids.current')))
      assign(out, 'pidsPeak', this.#number(join(pids.dir, 'pids.peak')))
    }
    if (cpu !== undefined) {
      const ms =
        cpu.version === 2
          ? keyed(this.#read(join(cpu.dir, 'cpu.stat'))).get('usage_usec')! / 1000
          : this.#number(join(cpu.dir, 'cpuacct.usage'))! / 1e6
      assign(out, 'cpuMs', Number.isFinite(ms) ? Math.round(ms) : undefined)
    }
    return out
  }

  /** What the kernel did at the tree's limits; `memory` false: its OOM kills are not read (0). */
  events(memory = true): TreeEvents {
    const memoryDir = memory ? this.#of('memory') : undefined
    const pids = this.#of('pids')
    const file = memoryDir?.version === 2 ? 'memory.events' : 'memory.oom_control'
    const oom =
      memoryDir === undefined ? undefined : keyed(this.#read(join(memoryDir.dir, file))).get('oom_kill')
    const max = pids === undefined ? undefined : keyed(this.#read(join(pids.dir, 'pids.events'))).get('max')
    return { oomKills: oom ?? 0, forksRefused: max ?? 0 }
  }

  /**
   * Removes the tree's cgroups off the launch path (an rmdir costs more than the rest of a tree's
   * end): by the remover when there is one, else on the thread pool; what is still busy is tried
   * again after `retryMs`, then left for `close` and the next start.
   */
  async removeLater(retryMs: number): Promise<void> {
    this.#release()
    const dirs = [...this.#leaves.values()]
    // How many the fork server left (busy: try again after retryMs); undefined: it did not try
    // (there is none, or it is gone), so they are removed here at once.
    const left = this.#remover === undefined ? undefined : await this.#remover(dirs)
    if (left === 0) this.#removedAll()
    for (let attempt = 0; attempt < 2 && !this.#removed; attempt++) {
      if (attempt > 0 || left !== undefined)
        await new Promise((resolve) => setTimeout(resolve, retryMs).unref())
      const results = await Promise.all(
        dirs.map((dir) =>
          rmdir(dir).then(
            () => true,
            (e: NodeJS.ErrnoException) => e.code === 'ENOENT',
          ),
        ),
      )
      if (results.every(Boolean)) this.#removedAll()
    }
  }

  #removedAll(): void {
    this.#removed = true
    this.#live.delete(this)
  }

  /**
   * Kills what waits in a tree no launch joined (the fork server's warm child) and removes it
   * now, waiting for that one exit: what a launch whose directories have the same names needs
   * first. Bounded: false when it is still there after 200 ms.
   */
  removeNow(): boolean {
    if (this.#kill !== 'cgroup.kill' || writeTo(join(this.dir, 'cgroup.kill'), '1') !== undefined) {
      for (const pid of this.members()) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
    }
    const pause = new Int32Array(new SharedArrayBuffer(4))
    for (let i = 0; i < 200; i++) {
      if (this.remove()) return true
      Atomics.wait(pause, 0, 0, 1)
    }
    return false
  }

  /** Removes the tree's cgroups (once empty); false when some could not be removed yet. */
  remove(): boolean {
    if (this.#removed) return true
    this.#release()
    let all = true
    for (const dir of this.#leaves.values()) all = removeDir(dir) && all
    this.#removed = all
    if (all) this.#live.delete(this)
    return all
  }
}

function assign<K extends keyof TreeUsage>(
  out: { -readonly [P in keyof TreeUsage]: TreeUsage[P] },
  key: K,
  value: number | undefined,
): void {
  if (value !== undefined && Number.isFinite(value)) out[key] = value as never
}
