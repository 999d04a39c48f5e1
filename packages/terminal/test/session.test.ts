// A process of the runtime on a terminal, driven as a model drives it (TerminalSession): keys by
// name, waits that end on a pattern, on quiet or on the end, the screen, and the bounds.
import { nativeSpawner } from '@toolvisor/launch-native'
import type { ManagedProcess } from '@toolvisor/process-runtime'
import { describe, expect, it } from 'vitest'
import { makeRuntime, tool } from '../../process-runtime/test/helpers.js'
import { MAX_INPUT_BYTES, plainText, TerminalSession } from '../src/index.js'

const spawner = nativeSpawner()
const chunks = { process: { mode: 'stream' as const, output: { framing: 'chunks' as const } } }

function start(file: string, args: string[], columns = 80, rows = 24): ManagedProcess {
  const runtime = makeRuntime({ spawner })
  return runtime.start({
    tool: tool(file, chunks),
    argv: args,
    env: { TERM: 'xterm-256color', LANG: 'C.UTF-8' },
    terminal: { columns, rows },
  })
}

describe('a terminal session', () => {
  it('drives a shell prompt: waits for the pattern, answers, and reads the screen', async () => {
    const process = start('/bin/bash', [
      '--norc',
      '--noprofile',
      '-c',
      'read -r -p "Continue? [y/n] " a; echo "answer=$a"',
    ])
    const session = TerminalSession.of(process)
    expect(TerminalSession.of(process)).toBe(session)
    expect(await session.settle({ maxMs: 5000, pattern: /\[y\/n\] $/ })).toBe('pattern')
    await session.send([{ text: 'y' }, { key: 'Enter' }])
    expect(await session.settle({ maxMs: 5000 })).toBe('ended')
    const screen = await session.snapshot()
    expect(screen.rows.slice(0, 2)).toEqual(['Continue? [y/n] y', 'answer=y'])
    expect(await process.exit).toMatchObject({ code: 0 })
  })

  it('settles on quiet, and a password read is not echoed', async () => {
    const process = start('/bin/bash', [
      '--norc',
      '--noprofile',
      '-c',
      'read -r -s -p "Password: " p; echo; echo "len=${#p}"; read -r _',
    ])
    const session = TerminalSession.of(process)
    expect(await session.settle({ maxMs: 5000, pattern: /Password: $/ })).toBe('pattern')
    await session.send([{ text: 'hunter2' }, { key: 'Enter' }])
    expect(await session.settle({ maxMs: 5000, pattern: /len=\d+/ })).toBe('pattern')
    expect(await session.settle({ maxMs: 5000, quietMs: 100 })).toBe('quiet')
    const screen = await session.snapshot()
    expect(screen.rows.join('\n')).not.toContain('hunter2')
    expect(screen.rows.slice(0, 2)).toEqual(['Password: ', 'len=7'])
    await session.send([{ key: 'C-c' }])
    expect((await process.exit).signal).toBe('SIGINT')
  })

  it('a program that never settles is waited for up to the bound only', async () => {
    const process = start('/bin/sh', ['-c', 'while :; do echo tick; sleep 0.02; done'])
    const session = TerminalSession.of(process)
    const began = Date.now()
    expect(await session.settle({ maxMs: 400, quietMs: 200 })).toBe('bound')
    expect(Date.now() - began).toBeLessThan(5000)
    await process.stop({ force: true })
  })

  it('resizes the terminal and the screen together', async () => {
    const script =
      'echo ready; until [ "$(stty size)" = "30 120" ]; do sleep 0.02; done; echo resized; read -r _'
    const process = start('/bin/bash', ['--norc', '--noprofile', '-c', script], 80, 24)
    const session = TerminalSession.of(process)
    expect(await session.settle({ maxMs: 5000, pattern: /ready/ })).toBe('pattern')
    session.resize({ columns: 120, rows: 30 })
    expect(await session.settle({ maxMs: 5000, pattern: /resized/ })).toBe('pattern')
    const screen = await session.snapshot()
    expect([screen.columns, screen.height]).toEqual([120, 30])
    await session.send([{ key: 'C-d' }])
    expect(await process.exit).toMatchObject({ code: 1 })
  })

  it('refuses unknown keys and oversized input before typing anything, and a process on pipes', async () => {
    const process = start('/bin/cat', [])
    const session = TerminalSession.of(process)
    await expect(session.send([{ text: 'abc' }, { key: 'Hyper-x' }])).rejects.toMatchObject({
      code: 'TERMINAL_ERR_UNKNOWN_KEY',
    })
    await expect(session.send([{ text: 'x'.repeat(MAX_INPUT_BYTES + 1) }])).rejects.toMatchObject({
      code: 'TERMINAL_ERR_INPUT_TOO_LARGE',
    })
    // Nothing of either was typed: the echo shows only what follows.
    await session.send([{ text: 'ok' }, { key: 'Enter' }])
    expect(await session.settle({ maxMs: 5000, pattern: /ok\nok\n/ })).toBe('pattern')
    expect((await session.snapshot()).rows.slice(0, 2)).toEqual(['ok', 'ok'])
    await session.send([{ key: 'C-d' }])
    expect(await process.exit).toMatchObject({ code: 0, signal: null })
    await expect(session.send([{ text: 'late' }])).rejects.toMatchObject({ code: 'RUNTIME_ERR_STDIN_CLOSED' })
    const runtime = makeRuntime({ spawner })
    const piped = runtime.start({ tool: tool('/bin/true', chunks), argv: [] })
    expect(() => TerminalSession.of(piped)).toThrow(/does not run on a terminal/)
    await piped.exit
  })

  it('a session made late shows what the program showed before', async () => {
    const process = start('/bin/sh', ['-c', 'printf "\\033]0;my title\\007"; echo early; read -r _'])
    const stdout = () => process.output.counters().stdoutBytes
    while (stdout() < 7) await new Promise((resolve) => setTimeout(resolve, 20))
    const session = TerminalSession.of(process)
    const screen = await session.snapshot()
    expect(screen.rows[0]).toBe('early')
    expect(screen.title).toBe('my title')
    process.terminal!.hangUp()
    await process.exit
  })
})

describe('plainText', () => {
  it('takes out escape sequences and carriage returns', () => {
    expect(plainText('\x1b[1;32m>>> \x1b[0m\x1b]0;t\x07a\r\nb\x1b=')).toBe('>>> a\nb')
  })
})
