/**
 * F8 of the 2026-12-01 review, the part the state-dir check cannot stop: whoever can rename in the
 * state directory (toolvisor's own user, root) swaps a run directory, or its spill directory, for
 * a link while the run is under way. The runtime holds the directories it made and opens its files
 * through them, without following a link: writes land in the real directory, never where a link
 * planted at the old path points, and the watchdog reads the log of the directory it was handed.
 */
import { spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, expect, it } from 'vitest'
import { markedProcesses } from '../src/index.js'
import { eventually } from '../src/testing.js'
import { fixture, makeRuntime, tempDir, tool } from './helpers.js'

const sh = tool('/bin/sh')
const zs = (n: number) => ['-c', `head -c ${n} /dev/zero | tr '\\0' Z`]

/** A directory of the attacker's: `spill/proc-N.stdout` and `processes.log` link into `target`. */
function evilDir(target: string): string {
  const evil = tempDir('tv-evil-')
  mkdirSync(join(evil, 'spill'))
  for (let n = 1; n <= 8; n++)
    symlinkSync(join(target, `pwned-proc-${n}`), join(evil, 'spill', `proc-${n}.stdout`))
  symlinkSync(join(target, 'pwned-processes.log'), join(evil, 'processes.log'))
  return evil
}

describe('F8: run and spill files are opened through the directories the run holds', () => {
  it('a run directory renamed, and a link planted at its path, take none of its writes', async () => {
    const stateDir = tempDir('tv-swap-')
    const runtime = makeRuntime({ stateDir, resultBytes: 1024 })
    const runDir = join(stateDir, 'runs', runtime.runId)
    const moved = join(stateDir, 'runs', `x-${runtime.runId}`)
    const target = tempDir('tv-target-')
    renameSync(runDir, moved)
    symlinkSync(evilDir(target), runDir)

    const proc = runtime.start({ tool: sh, argv: zs(5000) })
    expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
    expect(readdirSync(target)).toEqual([])
    expect(statSync(join(moved, 'spill', 'proc-1.stdout')).size).toBe(5000)
    expect(proc.output.bytes('stdout', 4000, 1000).toString()).toBe('Z'.repeat(1000))
    // The path reported is the one the run was made at (what an operator looks for).
    expect(proc.output.stdout().spillPath).toBe(join(runDir, 'spill', 'proc-1.stdout'))
    await runtime.dispose()
    expect(existsSync(join(moved, 'closed.json'))).toBe(true)
    expect(readFileSync(join(moved, 'processes.log'), 'utf8')).toContain('"id":"proc-1"')
  })

  it('a spill directory renamed, and a link planted at its path, take none of its writes', async () => {
    const stateDir = tempDir('tv-swap-')
    const runtime = makeRuntime({ stateDir, resultBytes: 1024 })
    const runDir = join(stateDir, 'runs', runtime.runId)
    const target = tempDir('tv-target-')
    renameSync(join(runDir, 'spill'), join(runDir, 'spill.moved'))
    symlinkSync(join(evilDir(target), 'spill'), join(runDir, 'spill'))

    const proc = runtime.start({ tool: sh, argv: zs(5000) })
    expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
    expect(readdirSync(target)).toEqual([])
    expect(statSync(join(runDir, 'spill.moved', 'proc-1.stdout')).size).toBe(5000)
  })

  it('a link planted in the spill directory at the name of the next spill file is not followed', async () => {
    const stateDir = tempDir('tv-swap-')
    // A small tail: the middle of the stream is then in memory nowhere (the newest 100 bytes are).
    const runtime = makeRuntime({ stateDir, resultBytes: 1024, tailBytes: 100 })
    const spill = join(stateDir, 'runs', runtime.runId, 'spill')
    const target = tempDir('tv-target-')
    const victim = join(target, 'victim')
    writeFileSync(victim, 'untouched')
    symlinkSync(victim, join(spill, 'proc-1.stdout'))

    const proc = runtime.start({ tool: sh, argv: zs(5000) })
    expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
    expect(readFileSync(victim, 'utf8')).toBe('untouched')
    expect(readlinkSync(join(spill, 'proc-1.stdout'))).toBe(victim)
    // The head is still in memory; what the file could not take is gone, and reads say so (none).
    expect(proc.output.stdout().head.length).toBe(1024)
    expect(proc.output.bytes('stdout', 2000, 100).length).toBe(0)
  })

  it("the watchdog of a run that died kills its tools from the log of the directory it was handed, whatever is at the run's path now", async () => {
    const stateDir = tempDir('tv-swap-watchdog-')
    const host = spawn(process.execPath, [fixture('host.mjs'), stateDir, '2'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: host.stdout! }).once('line', resolve)
      host.once('exit', (code) => reject(new Error(`host exited ${code}`)))
    })
    const runId = line.replace(/^ready /, '')
    try {
      const runDir = join(stateDir, 'runs', runId)
      renameSync(runDir, join(stateDir, 'runs', `x-${runId}`))
      // A run directory whose log lists nothing running.
      const empty = tempDir('tv-evil-')
      writeFileSync(join(empty, 'processes.log'), '')
      symlinkSync(empty, runDir)
      expect(markedProcesses(runId).length).toBeGreaterThan(0)
      host.kill('SIGKILL')
      expect(await eventually(() => markedProcesses(runId).length === 0, 3000)).toBe(true)
    } finally {
      if (host.exitCode === null) host.kill('SIGKILL')
      for (const pid of markedProcesses(runId)) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // gone meanwhile
        }
      }
    }
  })
})
