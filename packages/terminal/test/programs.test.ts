// Real full-screen programs on a real pseudo-terminal (the fork server's, decision 0110), driven by
// keys by name and read through the screen: `less` paged (its asciicast recording replays to the
// same screen), `vim` editing and writing a file. What
// the model would be shown is the rendered screen, not the escape codes the programs wrote. A
// program this host does not have is skipped, by its path.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { builtForkServer, ForkServer } from '@toolvisor/launch-native'
import type { Child } from '@toolvisor/process-runtime'
import { afterEach, describe, expect, it } from 'vitest'
import { AsciicastRecorder, type Keystroke, keystrokeBytes, Screen } from '../src/index.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()!()
})

/** `file ARGS` on an 80x24 terminal, its output rendered on a screen. */
async function onScreen(file: string, args: string[], cwd: string) {
  const server = new ForkServer(builtForkServer)
  cleanups.push(() => server.close())
  const { child } = await server.launch({
    file,
    args,
    cwd,
    env: { PATH: '/usr/bin:/bin', TERM: 'xterm-256color', HOME: cwd, LANG: 'C.UTF-8' },
    extraFds: [],
    terminal: { columns: 80, rows: 24 },
  })
  const screen = new Screen({ columns: 80, rows: 24 })
  cleanups.push(() => screen.dispose())
  // Recorded as it is shown: the recording must replay to the same screen.
  const recorder = new AsciicastRecorder({ columns: 80, rows: 24 })
  const recording = [recorder.header()]
  child.stdout!.on('data', (chunk: Buffer) => {
    screen.write(chunk)
    const line = recorder.output(chunk)
    if (line !== undefined) recording.push(line)
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const send = (...strokes: Keystroke[]) => child.stdin!.write(keystrokeBytes(strokes, screen.modes))
  /** Waits until the screen shows what `test` wants; the last screen seen. */
  const until = async (test: (rows: readonly string[]) => boolean) => {
    const deadline = Date.now() + 10_000
    let rows = (await screen.snapshot()).rows
    while (!test(rows) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      rows = (await screen.snapshot()).rows
    }
    expect(test(rows), rows.join('\n')).toBe(true)
    return rows
  }
  return { child: child as Child, screen, send, until, exited, recording }
}

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tv-terminal-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

describe('full-screen programs on a terminal, read through the screen', () => {
  it.skipIf(!existsSync('/usr/bin/less'))('less: the first page, Space for the next, q to quit', async () => {
    const dir = workDir()
    writeFileSync(join(dir, 'lines.txt'), Array.from({ length: 100 }, (_, n) => `line ${n + 1}`).join('\n'))
    const less = await onScreen('/usr/bin/less', ['lines.txt'], dir)
    const first = await less.until((rows) => rows[0] === 'line 1' && rows[22] === 'line 23')
    expect(first[23]).toMatch(/lines\.txt|:/)
    less.send({ text: ' ' })
    const second = await less.until((rows) => rows[0] === 'line 24')
    expect(second[22]).toBe('line 46')
    // The recording so far, replayed on a screen of its own, shows what the live screen shows.
    const replayed = new Screen({ columns: 80, rows: 24 })
    cleanups.push(() => replayed.dispose())
    const [header, ...events] = less.recording
    expect(JSON.parse(header!)).toMatchObject({ version: 2, width: 80, height: 24 })
    for (const line of events) replayed.write((JSON.parse(line) as [number, string, string])[2])
    expect((await replayed.snapshot()).rows).toEqual((await less.screen.snapshot()).rows)
    less.send({ text: 'q' })
    expect(await less.exited).toBe(0)
  })

  it.skipIf(!existsSync('/usr/bin/vim'))('vim: insert text, Escape, :wq writes the file', async () => {
    const dir = workDir()
    const vim = await onScreen('/usr/bin/vim', ['-u', 'NONE', '-N', '-n', 'note.txt'], dir)
    await vim.until((rows) => rows.some((row) => row.includes('note.txt')))
    vim.send({ text: 'i' }, { text: 'hello from a model' }, { key: 'Escape' })
    await vim.until((rows) => rows[0] === 'hello from a model')
    vim.send({ text: ':wq' }, { key: 'Enter' })
    expect(await vim.exited).toBe(0)
    expect(readFileSync(join(dir, 'note.txt'), 'utf8')).toBe('hello from a model\n')
  })
})
