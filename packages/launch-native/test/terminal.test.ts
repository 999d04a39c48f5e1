// A launch on a pseudo-terminal (issue 31): the fork server makes the terminal, the child's
// session takes it as its controlling terminal, and the runtime writes keystrokes to it and reads
// what the child shows, stdout and stderr alike, until the child ends.
import { existsSync, readFileSync } from 'node:fs'
import type { Child, Launch } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { server } from './fork-servers.js'

function onTerminal(file: string, args: string[], columns = 100, rows = 30): Launch {
  return {
    file,
    args,
    env: { PATH: '/usr/bin:/bin', TERM: 'xterm-256color' },
    cwd: '/',
    extraFds: [],
    terminal: { columns, rows },
  }
}

/** What the terminal showed until the child ended, and how it ended. */
function shown(child: Child, onData?: (text: string) => void) {
  let text = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk
    onData?.(text)
  })
  const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, signal) => resolve([code, signal])),
  )
  const closed = new Promise<void>((resolve) => child.stdout!.once('close', () => resolve()))
  return Promise.all([ended, closed]).then(([[code, signal]]) => ({ text, code, signal }))
}

describe('a launch on a terminal', () => {
  it('is its controlling terminal, of the size asked, and carries stdout and stderr', async () => {
    const { child } = await server().launch(
      onTerminal('/bin/sh', [
        '-c',
        'test -t 0 && test -t 1 && echo tty; stty size; echo err >&2; tty >/dev/null && echo has-tty',
      ]),
    )
    expect(child.stderr).toBeFalsy()
    const result = await shown(child)
    expect(result).toEqual({ text: 'tty\r\n30 100\r\nerr\r\nhas-tty\r\n', code: 0, signal: null })
  })

  it('takes keystrokes: a line is echoed and read, C-d ends the input', async () => {
    const { child } = await server().launch(
      onTerminal('/bin/sh', ['-c', 'read -r line; echo "got:$line"; cat']),
    )
    let sent = false
    const result = shown(child, (text) => {
      if (!sent && text.includes('got:hello')) {
        sent = true
        child.stdin!.write('\x04')
      }
    })
    child.stdin!.write('hello\r')
    expect(await result).toMatchObject({ code: 0, signal: null })
    expect((await result).text).toBe('hello\r\ngot:hello\r\n')
  })

  it('ends a program that closes its terminal on its way out with its exit, not a hang-up', async () => {
    // GNU cat closes stdout and stderr at exit, before it is gone: the master then reads EIO, and
    // closing the master at that moment hung the terminal up under the exiting program (SIGHUP
    // in about a third of runs). The master now closes once the child was waited for.
    for (let run = 0; run < 30; run++) {
      const { child } = await server().launch(onTerminal('/bin/cat', []))
      let text = ''
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk
      })
      const ended = new Promise((resolve) => child.once('exit', (code, signal) => resolve([code, signal])))
      child.stdin!.write('ok\r')
      expect(await eventually(() => text.includes('ok\r\nok\r\n'))).toBe(true)
      child.stdin!.write('\x04')
      expect(await ended).toEqual([0, null])
    }
  })

  it('delivers C-c as SIGINT to the foreground program', async () => {
    const { child } = await server().launch(onTerminal('/bin/sleep', ['30']))
    const result = shown(child)
    child.stdin!.write('\x03')
    expect(await result).toMatchObject({ code: null, signal: 'SIGINT' })
  })

  it.skipIf(!existsSync('/usr/bin/python3'))(
    'resizes: the program hears SIGWINCH and sees the new size',
    async () => {
      const forks = server()
      const program = [
        'import os, signal, time',
        'told = []',
        'signal.signal(signal.SIGWINCH, lambda *_: told.append(1))',
        'print("ready", flush=True)',
        'while not told: time.sleep(0.01)',
        'size = os.get_terminal_size(0)',
        'print(f"winch {size.columns}x{size.lines}", flush=True)',
      ].join('\n')
      const { child } = await forks.launch(onTerminal('/usr/bin/python3', ['-c', program]))
      let resized = false
      const result = shown(child, (text) => {
        if (!resized && text.includes('ready')) {
          resized = true
          forks.resize(child.pid!, { columns: 132, rows: 43 })
        }
      })
      expect(await result).toEqual({ text: 'ready\r\nwinch 132x43\r\n', code: 0, signal: null })
      expect(() => forks.resize(child.pid!, { columns: 0, rows: 10 })).toThrow(
        /1 to 65535 columns and rows, not 0x10/,
      )
    },
  )

  it('hangs up when the runtime closes its end: the session hears SIGHUP', async () => {
    const { child } = await server().launch(onTerminal('/bin/sleep', ['30']))
    const result = shown(child)
    child.stdin!.end()
    expect(await result).toMatchObject({ code: null, signal: 'SIGHUP' })
  })

  it.skipIf(!existsSync('/usr/bin/python3'))(
    'drives a Python REPL: an expression, a function over two lines, C-d ends it with 0',
    async () => {
      const { child } = await server().launch(onTerminal('/usr/bin/python3', ['-q']))
      const steps: Array<[RegExp, string]> = [
        [/>>> $/, '2+2\r'],
        [/4\r\n>>> $/, 'def sq(x):\r'],
        [/\.\.\. $/, '  return x*x\r'],
        [/\.\.\. $/, '\r'],
        [/>>> $/, 'sq(12)\r'],
        [/144\r\n>>> $/, '\x04'],
      ]
      let step = 0
      const result = shown(child, (text) => {
        const next = steps[step]
        if (next?.[0].test(text)) {
          step++
          child.stdin!.write(next[1])
        }
      })
      const ended = await result
      expect(step).toBe(steps.length)
      expect(ended).toMatchObject({ code: 0, signal: null })
      expect(ended.text).toContain('>>> 2+2\r\n4\r\n')
      expect(ended.text).toContain('144\r\n')
    },
  )

  it('relays a flood without holding it: a reader that pauses blocks the program, not the memory', async () => {
    const forks = server()
    const { child } = await forks.launch(onTerminal('/usr/bin/yes', ['flood']))
    let bytes = 0
    child.stdout!.on('data', (chunk: Buffer) => {
      bytes += chunk.length
    })
    expect(await eventually(() => bytes >= 1024 * 1024)).toBe(true)
    child.stdout!.pause()
    // The program ends up blocked writing to its terminal: what it wrote stops growing.
    const wrote = () => Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))![1])
    let last = -1
    const blocked = await eventually(() => {
      const now = wrote()
      const still = now === last
      last = now
      return still
    })
    expect(blocked).toBe(true)
    // Nothing piles up in the fork server meanwhile (it holds 16 KiB a direction).
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${forks.pid}/status`, 'utf8'))![1])
    expect(rss).toBeLessThan(16 * 1024)
    const before = bytes
    child.stdout!.resume()
    expect(await eventually(() => bytes > before)).toBe(true)
    const ended = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
    child.stdin!.end()
    expect(await ended).toBe('SIGHUP')
  })

  it('relays at most 64 terminals at once: one more is refused, saying so, and nothing runs', async () => {
    const forks = server()
    const open = await Promise.all(
      Array.from({ length: 64 }, () =>
        forks.launch(onTerminal('/bin/sleep', ['30'])).then(({ child }) => child),
      ),
    )
    await expect(forks.launch(onTerminal('/bin/echo', ['never']))).rejects.toThrow(
      'cannot start /bin/echo: 64 terminals are open in the fork server already (its bound); end one first; nothing ran',
    )
    const hungUp = open.map(
      (child) => new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal))),
    )
    for (const child of open) child.stdin!.end()
    expect(new Set(await Promise.all(hungUp))).toEqual(new Set(['SIGHUP']))
    // A slot is free again once a terminal ended.
    const { child } = await forks.launch(onTerminal('/bin/echo', ['again']))
    expect((await shown(child)).text).toBe('again\r\n')
  })
})
