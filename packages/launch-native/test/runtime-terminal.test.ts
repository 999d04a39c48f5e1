// A process of the runtime on a terminal (issue 31): started through the one launch path with
// `StartOptions.terminal`, typed into, resized and hung up through `ManagedProcess.terminal`.
import { readFileSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { makeRuntime, tool } from './helpers.js'

const sh = tool('/bin/sh', { process: { mode: 'stream', output: { framing: 'chunks' } } })

function shown(process: ManagedProcess): () => string {
  let text = ''
  process.output.onEvent((event) => {
    text += (event.value as Buffer).toString('utf8')
  })
  return () => text
}

describe('a process on a terminal', () => {
  it('shows stdout and stderr as one stream, takes keystrokes and ends on C-d', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({
      tool: sh,
      argv: ['-c', 'stty size; echo err >&2; read -r line; echo "got:$line"; cat; echo bye'],
      terminal: { columns: 90, rows: 20 },
    })
    const text = shown(process)
    expect(process.terminal?.size).toEqual({ columns: 90, rows: 20 })
    expect(await eventually(() => text().includes('20 90\r\nerr\r\n'))).toBe(true)
    await process.terminal!.type('hello\r')
    expect(await eventually(() => text().includes('got:hello'))).toBe(true)
    await process.terminal!.type('\x04')
    const exit = await process.exit
    expect(exit).toMatchObject({ status: 'exited', code: 0 })
    expect(text()).toMatch(/got:hello\r\nbye\r\n$/)
    // Everything it showed is in its stdout, nothing in a stderr it does not have.
    expect(process.output.counters().stderrBytes).toBe(0)
    await expect(process.terminal!.type('more')).rejects.toMatchObject({ code: 'RUNTIME_ERR_STDIN_CLOSED' })
  })

  it('resizes: the program sees the new size', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({
      tool: sh,
      // The size is polled: a resize (to the fork server) and keystrokes (to the terminal) travel
      // apart, and a trap's timing inside a builtin is the shell's.
      argv: ['-c', 'echo ready; until [ "$(stty size)" = "40 132" ]; do sleep 0.02; done; echo resized'],
      terminal: { columns: 80, rows: 24 },
    })
    const text = shown(process)
    expect(await eventually(() => text().includes('ready'))).toBe(true)
    process.terminal!.resize({ columns: 132, rows: 40 })
    expect(process.terminal!.size).toEqual({ columns: 132, rows: 40 })
    expect(await process.exit).toMatchObject({ code: 0 })
    expect(text()).toContain('resized')
    expect(() => process.terminal!.resize({ columns: 0, rows: 40 })).toThrow(/1 to 65535 columns and rows/)
  })

  it('^C reaches the foreground program as SIGINT, as on a terminal', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({
      tool: sh,
      argv: ['-c', 'trap "echo interrupted; exit 3" INT; echo ready; while :; do sleep 0.05; done'],
      terminal: { columns: 80, rows: 24 },
    })
    const text = shown(process)
    expect(await eventually(() => text().includes('ready'))).toBe(true)
    await process.terminal!.type('\x03')
    expect(await process.exit).toMatchObject({ code: 3 })
    expect(text()).toContain('interrupted')
  })

  it('hanging up sends SIGHUP to its session', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({
      tool: sh,
      argv: ['-c', 'echo ready; while :; do sleep 0.05; done'],
      terminal: { columns: 80, rows: 24 },
    })
    const text = shown(process)
    expect(await eventually(() => text().includes('ready'))).toBe(true)
    process.terminal!.hangUp()
    expect(await process.exit).toMatchObject({ signal: 'SIGHUP' })
  })

  it('refuses a size no terminal has, starting nothing', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({ tool: sh, argv: ['-c', 'echo ran'], terminal: { columns: 80, rows: 0 } })
    const exit = await process.exit
    expect(exit).toMatchObject({ status: 'failed', reason: 'spawn-failed' })
    expect(exit.why).toMatch(/1 to 65535 columns and rows, not 80x0/)
    expect(process.output.counters().stdoutBytes).toBe(0)
  })

  it('records its session as asciicast v2 in the spill directory: what it showed, what was typed, the resizes', async () => {
    const runtime = makeRuntime()
    const process = runtime.start({
      tool: sh,
      argv: ['-c', 'printf "\\033[1mbold\\033[0m é\\n"; read -r line; echo "got:$line"'],
      env: { TERM: 'xterm-256color' },
      terminal: { columns: 80, rows: 24 },
    })
    const text = shown(process)
    const path = process.terminal!.recording
    expect(basename(path)).toBe(`${process.id}.cast`)
    expect(await eventually(() => text().includes('bold'))).toBe(true)
    process.terminal!.resize({ columns: 100, rows: 30 })
    await process.terminal!.type('hi\r')
    expect(await process.exit).toMatchObject({ code: 0 })
    const lines = readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines[0]).toMatchObject({ version: 2, width: 80, height: 24, env: { TERM: 'xterm-256color' } })
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const events = lines.slice(1) as Array<[number, string, string]>
    // Every byte it showed, in order, as the program wrote it (escape codes and all).
    expect(
      events
        .filter(([, kind]) => kind === 'o')
        .map(([, , data]) => data)
        .join(''),
    ).toBe(text())
    expect(events.filter(([, kind]) => kind !== 'o').map(([, kind, data]) => [kind, data])).toEqual([
      ['r', '100x30'],
      ['i', 'hi\r'],
    ])
    const times = events.map(([time]) => time)
    expect(times).toEqual([...times].sort((a, b) => a - b))
  })

  it('stops its recording at the spill bound, with a marker, and the program runs on', async () => {
    const runtime = makeRuntime({ spillBytes: 64 * 1024 })
    const process = runtime.start({
      tool: sh,
      argv: ['-c', 'head -c 300000 /dev/zero | tr "\\0" x; echo; echo done'],
      terminal: { columns: 80, rows: 24 },
    })
    const text = shown(process)
    expect(await process.exit).toMatchObject({ code: 0 })
    expect(text()).toMatch(/done\r\n$/)
    const recorded = readFileSync(process.terminal!.recording, 'utf8')
    expect(recorded.length).toBeLessThan(64 * 1024 + 200)
    const lines = recorded
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines.at(-1)).toEqual([expect.any(Number), 'm', 'recording stopped: its cap'])
  })
})
