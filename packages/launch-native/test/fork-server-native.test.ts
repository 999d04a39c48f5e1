// toolvisor-spawnd's own C, spoken to over a raw IPC channel (no ForkServer in between): it compiles
// clean with -Werror, and requests it cannot read are answered without touching memory the
// request never set. The second build fills every uninitialised local with a pattern
// (-ftrivial-auto-var-init=pattern): a free of a pointer that was never set then crashes at once,
// where the plain build frees whatever the stack held and may survive by luck.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cgroupHost } from '@toolvisor/containment'
import type { Launch } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { encode, removePayload, warmPayload } from '../src/fork-request.js'
import { builtForkServer } from '../src/native-spawner.js'
import { tempDir } from './helpers.js'

const source = fileURLToPath(new URL('../native/toolvisor-spawnd.c', import.meta.url))
const hasCc = spawnSync('cc', ['--version']).status === 0

const cleanups: Array<() => void> = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})

function build(flags: readonly string[]): string {
  const out = join(tempDir(), 'toolvisor-spawnd')
  const result = spawnSync(
    'cc',
    [...flags, '-std=gnu99', '-O2', '-Wall', '-Wextra', '-Werror', '-o', out, source],
    { encoding: 'utf8' },
  )
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return out
}

/** The live children of `ppid`. */
function childrenOf(ppid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const [state, parent] = readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')
        return Number(parent) === ppid && state !== 'Z'
      } catch {
        return false
      }
    })
    .map(Number)
}

let made = 0

/** Kills what the cgroups below `base` hold and removes them, and `base` (bounded: 5 s). */
function removeAll(base: string): void {
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (const name of readdirSync(base, { withFileTypes: true }).filter((e) => e.isDirectory()))
    removeAll(join(base, name.name))
  for (let i = 0; i < 1000; i++) {
    for (const pid of readFileSync(join(base, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    try {
      rmdirSync(base)
      return
    } catch {
      Atomics.wait(pause, 0, 0, 5)
    }
  }
}

const exitTrue: Launch = { file: '/bin/true', args: [], env: {}, cwd: '/', extraFds: [] }

const binaries = [
  ['as built', () => builtForkServer, true],
  [
    'compiled with every uninitialised local set to a pattern',
    () => build(['-ftrivial-auto-var-init=pattern']),
    hasCc,
  ],
] as const

/**
 * The server spoken to directly over its channel (killed after the test): every answer as it came,
 * a wait for one with a prefix, and what it wrote on stderr.
 */
function rawServer(binary: string) {
  const raw = spawn(binary, [], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json' })
  cleanups.push(() => raw.kill('SIGKILL'))
  let stderr = ''
  raw.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  const answers: string[] = []
  raw.on('message', (message: unknown, handle: unknown) => {
    ;(handle as { close?: () => void } | undefined)?.close?.()
    if (typeof message === 'string') answers.push(message)
  })
  const answered = (prefix: string) => eventually(() => answers.some((a) => a.startsWith(prefix)))
  return { raw, answers, answered, stderr: () => stderr }
}

describe.each(binaries)('the fork server %s', (_, binary, runs) => {
  it.skipIf(!runs)(
    'answers requests it cannot read with "e ID EINVAL request" and goes on serving',
    async () => {
      const { raw, answers, answered, stderr } = rawServer(binary())
      raw.send(encode(1, exitTrue).toString('base64'))
      expect(await answered('s 1 ')).toBe(true)
      // Not base64 at all (the id is unknown: 0), then base64 of a request with its id only.
      raw.send('not base64')
      raw.send(Buffer.from('2\0').toString('base64'))
      raw.send(encode(3, exitTrue).toString('base64'))
      await answered('s 3 ')
      expect({ stderr: stderr(), exit: raw.exitCode ?? raw.signalCode }).toEqual({ stderr: '', exit: null })
      expect(answers.filter((a) => a.startsWith('e '))).toEqual(['e 0 22 request', 'e 2 22 request'])
    },
  )

  it.skipIf(!runs)(
    'a warm child ("w") becomes the next launch into its cgroups, or fails it as a fork would; a "w" it cannot read is ignored',
    async () => {
      const { raw, answers, answered, stderr } = rawServer(binary())
      const warm = (fields: string) => raw.send(`w ${Buffer.from(fields).toString('base64')}`)
      const children = () => childrenOf(raw.pid!)
      raw.send('w not base64 at all')
      warm('a dir and no count\0')
      warm('\0' + '2\0only one of two\0')
      // A warm child for launches with no cgroup (the runtime only ever warms a tree's).
      warm('\0' + '0\0')
      expect(await eventually(() => children().length === 1)).toBe(true)
      const [first] = children()
      // Each "w" answered in order: none made for the three it cannot read, then the one made.
      expect(await eventually(() => answers.filter((a) => a.startsWith('v ')).length === 4)).toBe(true)
      expect(answers.filter((a) => a.startsWith('v '))).toEqual(['v 0', 'v 0', 'v 0', `v ${first}`])
      // Into a cgroup that is gone (a tree given up on before the server read its "w"): none.
      warm('/sys/fs/cgroup/no-such-cgroup-of-toolvisor\0' + '0\0')
      expect(await eventually(() => answers.filter((a) => a.startsWith('v ')).length === 5)).toBe(true)
      expect(answers.at(-1)).toBe('v 0')
      expect(children()).toEqual([first])
      raw.send(encode(1, exitTrue).toString('base64'))
      expect(await answered('s 1 ')).toBe(true)
      expect(answers.find((a) => a.startsWith('s 1 '))).toBe(`s 1 ${first} 3`)
      // One that could not join its cgroups fails the launch into them at the cgroup stage.
      const procs = '/nonexistent/cgroup.procs'
      warm(`\0${'1'}\0${procs}\0`)
      expect(await eventually(() => children().length === 1 && children()[0] !== first)).toBe(true)
      const [second] = children()
      raw.send(encode(2, { ...exitTrue, cgroups: [procs] }).toString('base64'))
      expect(await answered('e 2 ')).toBe(true)
      expect(answers).toContain('e 2 2 cgroup')
      expect(await eventually(() => children().length === 0)).toBe(true)
      expect(second).not.toBe(first)
      // The server goes on, and told nothing of the warm children but their launches.
      raw.send(encode(3, exitTrue).toString('base64'))
      expect(await answered('s 3 ')).toBe(true)
      expect(answers.filter((a) => a.startsWith('x ') && !a.startsWith(`x ${first} `))).toHaveLength(1)
      expect({ stderr: stderr(), exit: raw.exitCode ?? raw.signalCode }).toEqual({ stderr: '', exit: null })
    },
  )

  const host = cgroupHost(undefined)
  const cgroups = host.available ? '' : `: skipped, no cgroup toolvisor may use here (${host.reason})`
  it.skipIf(!runs || !host.available)(
    `makes a tree's cgroups and limits ("w" MAKE WRITES), removes them ("r"), and leaves nothing of one it cannot make${cgroups}`,
    async () => {
      if (!host.available) return
      const { raw, answers, answered, stderr } = rawServer(binary())
      // A parent of our own in each hierarchy: what is left in it killed and removed after the test.
      const bases = host.hierarchies.map((h, i) => join(h.base, `tv-native-${process.pid}-${++made}-${i}`))
      for (const base of bases) mkdirSync(base)
      cleanups.unshift(() => {
        for (const base of bases) removeAll(base)
      })
      const leaf = (name: string) => bases.map((base) => join(base, name))
      const v1 = host.hierarchies.flatMap((h, i) => (h.version === 1 ? [i] : []))
      const plan = (name: string, writes: [string, string, boolean][] = []) => {
        const dirs = leaf(name)
        const bornIn = host.hierarchies[0]!.version === 2 ? dirs[0] : undefined
        return { bornIn, procsFiles: v1.map((i) => join(dirs[i]!, 'cgroup.procs')), make: dirs, writes }
      }
      const count = (prefix: string) => answers.filter((a) => a.startsWith(prefix)).length
      const pids = host.hierarchies.findIndex((h) => h.controllers.has('pids'))
      const limit: [string, string, boolean][] =
        pids < 0 ? [] : [[join(leaf('a')[pids]!, 'pids.max'), '7', false]]
      // Made, its limit written, a file the host lacks (optional) skipped, and a child waiting there.
      raw.send(`w ${warmPayload(plan('a', [...limit, [join(leaf('a')[0]!, 'no.such.file'), '1', true]]))}`)
      expect(await answered('v ')).toBe(true)
      const [, warm] = answers.find((a) => a.startsWith('v '))!.split(' ')
      expect(Number(warm)).toBeGreaterThan(0)
      for (const dir of leaf('a')) expect(existsSync(dir)).toBe(true)
      if (pids >= 0) expect(readFileSync(join(leaf('a')[pids]!, 'pids.max'), 'utf8').trim()).toBe('7')
      // The launch into it is that child.
      const a = plan('a')
      raw.send(
        encode(1, {
          ...exitTrue,
          ...(a.bornIn ? { cgroupDir: a.bornIn } : {}),
          cgroups: a.procsFiles,
        }).toString('base64'),
      )
      expect(await answered('s 1 ')).toBe(true)
      expect(answers.find((x) => x.startsWith('s 1 '))).toBe(`s 1 ${warm} 3`)
      expect(await answered(`x ${warm} `)).toBe(true)
      // Ended: removed. A tree with a process in it stays ("r 1": still there).
      raw.send(`w ${warmPayload(plan('busy'))}`)
      expect(await eventually(() => count('v ') === 2)).toBe(true)
      raw.send(`r ${removePayload([...leaf('a'), leaf('busy')[0]!])}`)
      expect(await answered('r ')).toBe(true)
      expect(answers.find((x) => x.startsWith('r '))).toBe('r 1')
      for (const dir of leaf('a')) expect(existsSync(dir)).toBe(false)
      expect(existsSync(leaf('busy')[0]!)).toBe(true)
      // One it cannot make: the mkdir refused (ENOENT, the second), or a limit refused (EINVAL).
      raw.send(`w ${warmPayload({ ...plan('b'), make: [leaf('b')[0]!, '/nonexistent/toolvisor/b'] })}`)
      const refused: [string, string, boolean][] =
        pids < 0 ? [] : [[join(leaf('c')[pids]!, 'pids.max'), 'not a number', false]]
      if (pids >= 0) raw.send(`w ${warmPayload(plan('c', refused))}`)
      expect(await eventually(() => count('v ') === (pids >= 0 ? 4 : 3))).toBe(true)
      expect(answers.filter((x) => x.startsWith('v 0 '))).toEqual([
        'v 0 2 mkdir:1',
        ...(pids >= 0 ? ['v 0 22 write:0'] : []),
      ])
      for (const dir of [...leaf('b'), ...leaf('c')]) expect(existsSync(dir)).toBe(false)
      // A payload it cannot read.
      raw.send(`r ${Buffer.from('2\0only one\0').toString('base64')}`)
      expect(await eventually(() => count('r ') === 2)).toBe(true)
      expect(answers.filter((x) => x.startsWith('r ')).at(-1)).toBe('r -1')
      expect({ stderr: stderr(), exit: raw.exitCode ?? raw.signalCode }).toEqual({ stderr: '', exit: null })
    },
  )
})
