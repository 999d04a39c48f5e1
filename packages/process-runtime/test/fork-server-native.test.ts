// toolvisor-spawnd's own C, spoken to over a raw IPC channel (no ForkServer in between): it compiles
// clean with -Werror, and requests it cannot read are answered without touching memory the
// request never set. The second build fills every uninitialised local with a pattern
// (-ftrivial-auto-var-init=pattern): a free of a pointer that was never set then crashes at once,
// where the plain build frees whatever the stack held and may survive by luck.
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { encode } from '../src/fork-request.js'
import { builtForkServer, type Launch } from '../src/index.js'
import { eventually } from '../src/testing.js'
import { fixtures, tempDir } from './helpers.js'

const source = join(fixtures, '..', '..', 'native', 'toolvisor-spawnd.c')
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
})
