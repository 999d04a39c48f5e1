// A cgroup per launch without any launch path (decision 0097): a run's trees made here (no
// placement: `Containment` makes them itself), a real process joined to every leaf the way a
// launch joins them, then killed whole however it hid, accounted, and removed; and a crashed run's
// cgroups reaped from its record. Needs cgroups toolvisor may use (root here, or a delegated v2
// subtree): skipped, saying why, elsewhere.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Containment, cgroupHost, procStat, reapCgroups, type Tree } from '../src/index.js'

const host = cgroupHost(undefined)
const why = host.available ? '' : host.reason
/** The host's cgroups, in the tests that run only where there are some. */
const here = host as Extract<typeof host, { available: true }>
const started: ChildProcess[] = []
const cleanups: Array<() => Promise<void> | void> = []

afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL')
  while (cleanups.length > 0) await cleanups.pop()!()
})

let runs = 0

/** A run's containment, closed after the test. */
function containment(): Containment {
  const run = `test-${process.pid}-${++runs}`
  const contained = new Containment(
    host as Extract<typeof host, { available: true }>,
    run,
    () => undefined,
    () => ['proc-next', {}],
  )
  cleanups.push(async () => {
    await contained.release()
    contained.close()
  })
  return contained
}

/**
 * A shell joined to every leaf of `tree` (as a launch joins them before its exec), that starts a
 * `setsid` sleeper with a cleared environment, then sleeps itself. Resolves with both pids.
 */
async function hidden(tree: Tree): Promise<{ shell: number; stray: number }> {
  const files = [...tree.procsFiles(), ...(tree.bornIn ? [join(tree.bornIn, 'cgroup.procs')] : [])]
  const join0 = files.map((file) => `echo 0 > ${file}`).join('; ')
  const child = spawn('/bin/sh', ['-c', `${join0}; setsid env -i sleep 300 & echo $!; exec sleep 300`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  started.push(child)
  const stray = await new Promise<number>((resolve) =>
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  )
  return { shell: child.pid!, stray }
}

const running = (pid: number) => {
  const stat = procStat(pid)
  return stat !== undefined && stat.state !== 'Z'
}

describe('a cgroup tree per launch', () => {
  if (!host.available) it.skip(`all (skipped: no cgroup toolvisor may use here: ${why})`, () => {})

  it.skipIf(!host.available)(
    'holds what its launch started, however it hid, and kills it whole',
    async () => {
      const tree = await containment().tree('proc-1', { pids: 16 })
      const { shell, stray } = await hidden(tree)
      expect(tree.members().sort()).toEqual([shell, stray].sort())
      expect(await tree.kill()).toBe(true)
      expect(await tree.emptied()).toBe(true)
      expect(running(stray)).toBe(false)
      expect(running(shell)).toBe(false)
      const usage = tree.usage(true)
      if (here.hierarchies.some((h) => h.controllers.has('pids')))
        expect(usage.pidsPeak).toBeGreaterThanOrEqual(2)
      expect(tree.remove()).toBe(true)
      expect(existsSync(tree.dir)).toBe(false)
    },
  )

  it.skipIf(!host.available)('writes its limits before anything joins it', async () => {
    const pids = here.hierarchies.find((h) => h.controllers.has('pids'))
    if (pids === undefined) return
    const tree = await containment().tree('proc-1', { pids: 7 })
    const leaf = join(pids.base, tree.dir.split('/').slice(-2).join('/'))
    expect(readFileSync(join(leaf, 'pids.max'), 'utf8').trim()).toBe('7')
    expect(tree.members()).toEqual([])
    expect(await tree.kill()).toBe(false) // nothing to kill: most tools leave nothing
    expect(tree.remove()).toBe(true)
  })

  it.skipIf(!host.available)(
    "a crashed run's cgroups are killed from its record, counted by leaf",
    async () => {
      const contained = containment()
      const tree = await contained.tree('proc-3', {})
      const { stray } = await hidden(tree)
      const record = { dirs: contained.runDirs, kill: here.kill }
      const killed = reapCgroups(record)
      expect(killed.get('proc-3')).toBe(2)
      expect(running(stray)).toBe(false)
      for (const dir of contained.runDirs) expect(existsSync(dir)).toBe(false)
    },
  )
})
