import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { cgroupHost } from '@toolvisor/containment'
import { markedProcesses } from '@toolvisor/process-runtime'
import {
  box,
  boxesHere,
  eventually,
  forker,
  processesInRun,
  processesRunning,
} from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { forkServer } from '../src/fork-servers.js'
import { builtForkServer } from '../src/native-spawner.js'
import { makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

/**
 * Containment (decision 0097), written as the attacker: a tool that sheds everything toolvisor
 * could follow (its environment, its group, its session, its descriptors) and one that tries to
 * exhaust the host. Every test that could exhaust the host runs its runtime in a box first: a
 * cgroup of its own with a small pids.max and memory limit, so a limit that did not hold would
 * stop at the box.
 */

const host = cgroupHost(undefined)
const why = host.available
  ? ''
  : `no cgroup toolvisor may use here (${host.reason}): needs root or a delegated v2 subtree`
const withCgroups = host.available ? it : it.skip
const withPidsAndMemory = boxesHere() === undefined ? it : it.skip

/** A pid is gone: absent, or a zombie nobody reaped yet. */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] === 'Z'
  } catch {
    return true
  }
}

/** A runtime's host in a process of its own, launching through this package's fork server. */
const containedHost = fileURLToPath(new URL('fixtures/contained-host.mjs', import.meta.url))

/** The pids the strays wrote to `dir` (one file each). */
function strays(dir: string): number[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.pid'))
    .map((name) => Number(readFileSync(join(dir, name), 'utf8').trim()))
}

/**
 * Strays that shed all a marker scan or a group kill follows: `setsid env -i` (no marker, no
 * group, no session), a double fork under `env -i`, and one that closes every descriptor first.
 * Each writes its pid to DIR, then sleeps. The command prints `up` once all three are there.
 */
function evasive(dir: string): string {
  const double = [
    'import os, time',
    'if os.fork(): os._exit(0)',
    'os.setsid()',
    'if os.fork(): os._exit(0)',
    `open("${dir}/double.pid", "w").write(str(os.getpid()))`,
    'time.sleep(300)',
  ].join('\n')
  const closer = `import os, time; open("${dir}/closer.pid", "w").write(str(os.getpid())); os.closerange(0, 65536); time.sleep(300)`
  return [
    `setsid env -i /bin/sh -c 'echo $$ > ${dir}/setsid.pid; exec sleep 300' &`,
    `env -i python3 -c '${double}'`,
    `setsid env -i python3 -c '${closer}' &`,
    `while [ "$(ls ${dir} | wc -l)" -lt 3 ]; do sleep 0.01; done; echo up`,
  ].join('\n')
}

/**
 * A runtime hosting a tool whose strays (`evasive`) run in `dir`, killed -9 with its watchdog once
 * they are in place: nothing is left to kill them but a later start.
 */
async function hostKilledWithStrays(stateDir: string, dir: string): Promise<void> {
  const args = [containedHost, stateDir, '{}', `${evasive(dir)}\nexec sleep 300`, 'hold']
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`host exited ${code}`)))
  })
  for (const pid of processesRunning(line.split(' ')[1]!)) process.kill(pid, 'SIGKILL') // the watchdog
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

describe('one cgroup per launch', () => {
  it.skipIf(!host.available)(`(skipped: ${why || 'none'})`, () => {})

  withCgroups('a stray that shed its environment, group, session and descriptors dies at stop', async () => {
    const runtime = makeRuntime()
    const dir = tempDir('tv-strays-')
    const tool = await runtime.preparePlain({ name: 'evasive', file: '/bin/sh', mode: 'stream' })
    const proc = runtime.start({ tool, argv: ['-c', `${evasive(dir)}\nexec sleep 300`] })
    expect(
      await eventually(() => proc.output.counters().events > 0 || proc.output.stdout().totalBytes > 0),
    ).toBe(true)
    const pids = strays(dir)
    expect(pids).toHaveLength(3)
    // Nothing of them carries the marker: the scan alone would miss every one.
    for (const pid of pids) expect(markedProcesses(runtime.runId)).not.toContain(pid)
    await proc.stop()
    expect(pids.filter((pid) => !gone(pid))).toEqual([])
  })

  withCgroups('a stray dies when the tool ends by itself, and when the runtime is disposed', async () => {
    const runtime = makeRuntime()
    const dir = tempDir('tv-strays-')
    const tool = await runtime.preparePlain({ name: 'evasive', file: '/bin/sh' })
    const ended = runtime.start({ tool, argv: ['-c', evasive(dir)] })
    const exit = await ended.exit
    expect(exit).toMatchObject({ status: 'exited', code: 0 })
    expect(exit.usage?.pidsPeak).toBeGreaterThanOrEqual(4)
    expect(strays(dir).filter((pid) => !gone(pid))).toEqual([])

    const other = tempDir('tv-strays-')
    const stream = await runtime.preparePlain({ name: 'evasive', file: '/bin/sh', mode: 'stream' })
    const running = runtime.start({ tool: stream, argv: ['-c', `${evasive(other)}\nexec sleep 300`] })
    expect(await eventually(() => running.output.stdout().totalBytes > 0)).toBe(true)
    expect(running.usage()?.pids).toBeGreaterThanOrEqual(4)
    await runtime.dispose()
    expect(strays(other).filter((pid) => !gone(pid))).toEqual([])
  })

  withCgroups(
    'after kill -9 of the runtime and its watchdog, the next start kills the strays and reports them lost',
    async () => {
      const stateDir = tempDir('tv-contained-')
      const dir = tempDir('tv-strays-')
      await hostKilledWithStrays(stateDir, dir)
      const pids = strays(dir)
      expect(pids).toHaveLength(3)
      // Nothing killed them: no watchdog, and no marker to find them by.
      expect(pids.filter((pid) => !gone(pid))).toHaveLength(3)
      const next = makeRuntime({ stateDir })
      const lost = next.lost().find((p) => p.tool === 'contained')
      expect(lost).toMatchObject({ session: 'session-a' })
      // The three strays at least (the tool's own shell died with the fork server: PDEATHSIG).
      expect(lost!.killed).toBeGreaterThanOrEqual(3)
      expect(await eventually(() => pids.every(gone))).toBe(true)
    },
  )

  withCgroups('a cgroup left by a runtime whose run record is gone is killed at the next start', async () => {
    const stateDir = tempDir('tv-contained-')
    const dir = tempDir('tv-strays-')
    await hostKilledWithStrays(stateDir, dir)
    const pids = strays(dir)
    // Another state directory: this start has no record of that run, only its cgroup (no grace:
    // the run is seconds old).
    const next = makeRuntime({ orphanGraceMs: 0 })
    expect(next.lost()).toEqual([])
    expect(next.warnings().join('\n')).toMatch(
      /killed \d+ processes left in the cgroups of runtimes that are gone/,
    )
    expect(await eventually(() => pids.every(gone))).toBe(true)
    makeRuntime({ stateDir }) // its records are reported (nothing is left to kill)
  })
})

/** What a launch sees of itself: its pid, descriptors, signal state and environment. */
const SELF =
  'echo $$; ls /proc/self/fd; grep -E "^(SigBlk|SigIgn|SigCgt|NoNewPrivs)" /proc/self/status; env | grep -v ^TOOLVISOR_PROCESS= | sort'

/** The one process waiting in run `runId`'s cgroups once its launches ended: the warm child. */
async function waiting(runId: string): Promise<number> {
  expect(await eventually(() => processesInRun(runId).length === 1)).toBe(true)
  return processesInRun(runId)[0]!
}

/** The member hierarchy's leaf of run `runId` that `pid` is in. */
function leafOf(pid: number, runId: string): string {
  if (!host.available) throw new Error('no cgroups')
  const member = host.hierarchies[0]!
  const path = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((line) => line.includes(`/${runId}/`))!
  return join(member.base, runId, basename(path))
}

describe('the tree made ahead, and the fork server child that waits in it', () => {
  withCgroups(
    'the next launch is that child, in its cgroups already, and runs exactly as one forked at its launch',
    async () => {
      const runtime = makeRuntime()
      const tool = await runtime.preparePlain({ name: 'self', file: '/bin/sh' })
      await runtime.start({ tool, argv: ['-c', 'true'] }).exit
      const warm = await waiting(runtime.runId)
      const proc = runtime.start({ tool, argv: ['-c', SELF] })
      expect(await proc.exit).toMatchObject({ code: 0 })
      const [pid, ...seen] = proc.output.stdout().head.toString().split('\n')
      expect(proc.pid).toBe(warm)
      expect(Number(pid)).toBe(warm)
      // Forked at its launch (no cgroup: nothing is made ahead), the same tool sees the same.
      const forked = makeRuntime({ cgroup: false })
      const same = await forked.preparePlain({ name: 'self', file: '/bin/sh' })
      const direct = forked.start({ tool: same, argv: ['-c', SELF] })
      await direct.exit
      expect(seen).toEqual(direct.output.stdout().head.toString().split('\n').slice(1))
      expect(seen).toContain('SigBlk:\t0000000000000000')
      expect(seen).toContain('SigIgn:\t0000000000000000')
    },
  )

  withCgroups('a launch with other limits has them written in that tree before it runs', async () => {
    const runtime = makeRuntime()
    const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
    await runtime.start({ tool: plain, argv: ['-c', 'true'] }).exit
    const warm = await waiting(runtime.runId)
    const pidsMax =
      'cat "$(grep -E "^[0-9]+:pids:" /proc/self/cgroup | cut -d: -f3- | sed "s|^|/sys/fs/cgroup/pids|")/pids.max" 2>/dev/null || cat "/sys/fs/cgroup/unified$(grep ^0:: /proc/self/cgroup | cut -d: -f3-)/pids.max"'
    const limited = await runtime.preparePlain({ name: 'limited', file: '/bin/sh', limits: { pids: 40 } })
    const proc = runtime.start({ tool: limited, argv: ['-c', pidsMax] })
    expect(await proc.exit).toMatchObject({ code: 0 })
    expect(proc.pid).toBe(warm)
    if (host.available && host.hierarchies.some((h) => h.controllers.has('pids')))
      expect(proc.output.stdout().head.toString().trim()).toBe('40')
  })

  const v1Cpu = host.available && host.hierarchies.some((h) => h.version === 1 && h.controllers.has('cpu'))
  it.skipIf(!v1Cpu)(
    `a launch whose limits need a leaf the tree made ahead has not (a v1 cpu limit) gets its own, and the waiting child is killed first (${v1Cpu ? 'runs here' : 'skipped: no v1 cpu hierarchy here'})`,
    async () => {
      const runtime = makeRuntime()
      const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
      await runtime.start({ tool: plain, argv: ['-c', 'true'] }).exit
      const warm = await waiting(runtime.runId)
      const cpu = await runtime.preparePlain({ name: 'cpu', file: '/bin/sh', limits: { cpu: 0.5 } })
      const proc = runtime.start({ tool: cpu, argv: ['-c', 'grep -c "" /proc/self/cgroup; echo $$'] })
      expect(await proc.exit).toMatchObject({ code: 0 })
      expect(proc.pid).not.toBe(warm)
      expect(gone(warm)).toBe(true)
      expect(proc.output.stdout().head.toString().split('\n')[1]).toBe(String(proc.pid))
    },
  )

  withCgroups(
    'a tree made ahead that no launch joins is killed with the child in it, and removed',
    async () => {
      const runtime = makeRuntime()
      const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
      await runtime.start({ tool: plain, argv: ['-c', 'true'] }).exit
      const first = await waiting(runtime.runId)
      const firstLeaf = leafOf(first, runtime.runId)
      expect(existsSync(firstLeaf)).toBe(true)
      // A launch that fails before it is contained (its rundir cannot be made again) skips that
      // tree: the next launch has another id, and the one made ahead is given up.
      const dir = tempDir('tv-rundir-')
      const broken = await runtime.prepare({
        path: '/bin/true',
        dir,
        slug: 'rundir',
        process: processSpec({ output: output('chunks') }),
        runtime: runtimeSpec({ rundir: 'state' }),
      })
      rmSync(join(dir, 'state'), { recursive: true })
      writeFileSync(join(dir, 'state'), 'a file where the rundir was')
      const next = runtime.start({ tool: broken, argv: [] })
      expect((await next.exit).why).toMatch(/rundir/)
      const after = runtime.start({ tool: plain, argv: ['-c', 'true'] })
      await after.exit
      expect(after.pid).not.toBe(first)
      expect(await eventually(() => gone(first))).toBe(true)
      expect(await eventually(() => !existsSync(firstLeaf))).toBe(true)
      // And at dispose, the one waiting then.
      const last = await waiting(runtime.runId)
      await runtime.dispose()
      expect(gone(last)).toBe(true)
      expect(processesInRun(runtime.runId)).toEqual([])
    },
  )
})

describe('trees the fork server makes and removes (off the event loop)', () => {
  withCgroups(
    'a launch leaves no cgroup of its own once it ended, only the one made for the next',
    async () => {
      const runtime = makeRuntime()
      const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
      const first = runtime.start({ tool: plain, argv: ['-c', 'echo $$'] })
      await first.exit
      const leaf = leafOf(await waiting(runtime.runId), runtime.runId)
      const member = join(host.available ? host.hierarchies[0]!.base : '', runtime.runId)
      // Removed by the server once the end was told; the tree made ahead for the next is there.
      expect(await eventually(() => readdirSync(member).filter((f) => !f.includes('.')).length === 1)).toBe(
        true,
      )
      expect(readdirSync(member).filter((f) => !f.includes('.'))).toEqual([basename(leaf)])
      await runtime.dispose()
      expect(existsSync(member)).toBe(false)
    },
  )

  const v2 = host.available && host.hierarchies[0]!.version === 2
  it.skipIf(!v2)(
    `a tree the server cannot make fails its launch alone, saying why, and the next one after runs (${v2 ? 'runs here' : 'skipped: no v2 member hierarchy here'})`,
    async () => {
      if (!host.available) return
      const runtime = makeRuntime()
      const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
      await waiting(runtime.runId)
      const member = join(host.hierarchies[0]!.base, runtime.runId)
      // No cgroup more below the run's: the one made ahead is joined, the next cannot be made
      // (by the server ahead, nor here at its launch).
      writeFileSync(join(member, 'cgroup.max.descendants'), '0')
      try {
        expect(await runtime.start({ tool: plain, argv: ['-c', 'true'] }).exit).toMatchObject({ code: 0 })
        const refused = runtime.start({ tool: plain, argv: ['-c', 'echo ran'] })
        const exit = await refused.exit
        expect(exit.status).toBe('failed')
        expect(exit.why).toMatch(
          /^cannot contain the launch: cannot make the cgroup \/.+: EAGAIN; nothing was started$/,
        )
        expect(refused.output.stdout().head.toString()).toBe('')
      } finally {
        writeFileSync(join(member, 'cgroup.max.descendants'), 'max')
      }
      const after = runtime.start({ tool: plain, argv: ['-c', 'cat /proc/self/cgroup'] })
      expect(await after.exit).toMatchObject({ code: 0 })
      expect(after.output.stdout().head.toString()).toContain(`/${runtime.runId}/`)
      await runtime.dispose()
      expect(processesInRun(runtime.runId)).toEqual([])
    },
  )

  withCgroups(
    'the fork server killed (kill -9) with a tree made ahead: the next launch is still contained, and nothing is left',
    async () => {
      const runtime = makeRuntime()
      const plain = await runtime.preparePlain({ name: 'plain', file: '/bin/sh' })
      await runtime.start({ tool: plain, argv: ['-c', 'true'] }).exit
      const warm = await waiting(runtime.runId)
      // This process's fork server (the runtime's): once the runtime has seen it die, the next
      // launch starts another (one sent to it while dying fails, as any launch in flight then).
      const server = forkServer(builtForkServer)!
      process.kill(server.pid!, 'SIGKILL')
      expect(await eventually(() => !server.alive && gone(warm))).toBe(true)
      const proc = runtime.start({ tool: plain, argv: ['-c', 'cat /proc/self/cgroup'] })
      expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
      expect(proc.output.stdout().head.toString()).toContain(`/${runtime.runId}/`)
      expect((await proc.exit).usage).toHaveProperty('pidsPeak')
      await runtime.dispose()
      expect(processesInRun(runtime.runId)).toEqual([])
      if (host.available)
        for (const hierarchy of host.hierarchies)
          expect(existsSync(join(hierarchy.base, runtime.runId))).toBe(false)
    },
  )
})

/** Runs `command` under `limits` in a boxed host (contained-host.mjs); its one JSON line. */
async function contained(limits: object, command: string) {
  const boxed = box()
  try {
    const args = [containedHost, tempDir('tv-boxed-'), JSON.stringify(limits), command]
    const child = boxed.spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    expect(code).toBe(0)
    return { ...JSON.parse(text), boxPeak: boxed.peak(), boxRefused: boxed.refused() }
  } finally {
    boxed.remove()
  }
}

/** The files a hierarchy's leaf holds a launch's limits in, and their expected text. */
const LIMIT_FILES = {
  2: { memory: ['memory.max', '67108864'], pids: ['pids.max', '32'], cpu: ['cpu.max', '50000 100000'] },
  1: {
    memory: ['memory.limit_in_bytes', '67108864'],
    pids: ['pids.max', '32'],
    cpu: ['cpu.cfs_quota_us', '50000'],
  },
} as const

describe('limits, written where the kernel enforces them', () => {
  for (const version of [2, 1] as const) {
    const here = host.available ? host.hierarchies.filter((h) => h.version === version) : []
    const controllers = here
      .flatMap((h) => [...h.controllers])
      .filter((c) => c === 'memory' || c === 'pids' || c === 'cpu')
    const reason =
      controllers.length > 0
        ? `runs here: ${controllers.join(', ')}`
        : `skipped: no cgroup v${version} controller toolvisor may use here (${host.available ? 'the hierarchy has none delegated' : host.reason})`
    it.skipIf(controllers.length === 0)(
      `cgroup v${version}: memory, pids and cpu limits of a launch are in its leaf (${reason})`,
      async () => {
        const runtime = makeRuntime()
        const limits = { memory: 64 * 1024 * 1024, pids: 32, cpu: 0.5 }
        const tool = await runtime.preparePlain({ name: 'limited', file: '/bin/sh', mode: 'stream', limits })
        const proc = runtime.start({ tool, argv: ['-c', 'echo up; exec sleep 30'] })
        expect(await eventually(() => proc.output.stdout().totalBytes > 0)).toBe(true)
        const membership = readFileSync(`/proc/${proc.pid}/cgroup`, 'utf8')
        for (const hierarchy of here) {
          for (const controller of hierarchy.controllers) {
            if (controller !== 'memory' && controller !== 'pids' && controller !== 'cpu') continue
            // The leaf the process is in, in this hierarchy: its base, the run, the launch's id.
            const leaf = join(hierarchy.base, runtime.runId, proc.id)
            const line = membership
              .split('\n')
              .find((l) =>
                version === 2 ? l.startsWith('0::') : l.split(':')[1]!.split(',').includes(controller),
              )
            expect(line?.endsWith(`/${runtime.runId}/${proc.id}`), `${controller} membership: ${line}`).toBe(
              true,
            )
            const [file, value] = LIMIT_FILES[version][controller]
            expect(readFileSync(join(leaf, file), 'utf8').trim()).toBe(value)
          }
        }
        await proc.stop()
      },
    )
  }
})

describe('limits, enforced', () => {
  withPidsAndMemory(
    'a tool forking 10,000 processes under pids 64 gets EAGAIN at 64; the host does not notice',
    async () => {
      const bomb = forker()
      const result = await contained({ pids: 64 }, bomb)
      // The shell, python, and 62 children: python's next fork is the 65th process.
      expect(result.stdout).toMatch(/refused after 6[0-2]/)
      expect(result.exit.limit).toMatchObject({ field: 'pids', value: 64, ended: false })
      expect(result.exit.why).toMatch(/hit the process limit \(64 processes\): \d+ forks? refused/)
      expect(result.stderr).toContain('[toolvisor: hit the process limit (64 processes)')
      expect(result.others).toBe('running')
      expect(result.boxRefused).toBe(0)
      expect(result.boxPeak).toBeLessThan(150)
    },
  )

  withPidsAndMemory(
    'a tool allocating without end under memory 64M ends out of memory; the others run on',
    async () => {
      const hog = `exec python3 -c '
x = []
while True: x.append(bytearray(1 << 20))
'`
      const result = await contained({ memory: 64 * 1024 * 1024 }, hog)
      expect(result.exit).toMatchObject({
        status: 'failed',
        reason: 'limit',
        why: 'out of memory (limit 64 MiB)',
      })
      expect(result.exit.usage.memoryPeak).toBeGreaterThan(32 * 1024 * 1024)
      expect(result.exit.usage.memoryPeak).toBeLessThanOrEqual(64 * 1024 * 1024)
      expect(result.others).toBe('running')
    },
  )

  withCgroups('cpu_time 1 ends a spin', async () => {
    const runtime = makeRuntime()
    const tool = await runtime.preparePlain({ name: 'spin', file: '/bin/sh', limits: { cpuTime: 1 } })
    const exit = await runtime.start({ tool, argv: ['-c', 'exec python3 -c "while True: pass"'] }).exit
    expect(exit).toMatchObject({ status: 'failed', reason: 'limit', why: 'cpu time limit reached (1 s)' })
    // RLIMIT_CPU is checked at the scheduler's ticks: the tree's exact cpu time is near the second, not at it.
    expect(exit.usage?.cpuMs).toBeGreaterThanOrEqual(500)
  })

  withCgroups('file_size stops a runaway write at the limit', async () => {
    const runtime = makeRuntime()
    const dir = tempDir('tv-fsize-')
    const tool = await runtime.preparePlain({
      name: 'writer',
      file: '/bin/sh',
      limits: { fileSize: 1024 * 1024 },
    })
    const exit = await runtime.start({ tool, argv: ['-c', `exec cat /dev/zero > ${dir}/out`] }).exit
    expect(exit).toMatchObject({ status: 'failed', reason: 'limit', why: 'file size limit reached (1 MiB)' })
    expect(readFileSync(join(dir, 'out')).length).toBe(1024 * 1024)
  })
})
