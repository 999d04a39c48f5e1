// bash on a terminal (issue 31): `tty: true` runs a command on a pseudo-terminal, `write_stdin`
// types into it and waits for the answer, `bash_output` reads the new output or the screen. Real
// programs (python, less, vim, top) on real terminals; one this host lacks is skipped by its path.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compose, tempDir } from './helpers.js'

const has = (path: string) => existsSync(path)
const started = (text: string) => /started background task (\S+)/.exec(text)?.[1] ?? ''

describe('bash with tty: true', () => {
  it('runs a foreground command on a terminal: stdout and stderr as one stream, line ends as lines', async () => {
    const { call } = await compose()
    const onTerminal = await call('bash', {
      command: 'test -t 0 && test -t 1 && echo tty; stty size; echo err >&2',
      description: 'checks the terminal',
      tty: true,
      columns: 100,
      rows: 30,
    })
    expect(onTerminal).toMatchObject({ isError: false, text: 'tty\n30 100\nerr\n' })
    const onPipes = await call('bash', { command: 'test -t 0 || echo pipes', description: 'checks pipes' })
    expect(onPipes.text).toBe('pipes\n')
  })

  it.skipIf(!has('/usr/bin/python3'))(
    'drives a Python REPL: 2+2, a function over two sends, C-d ends it',
    async () => {
      const { call } = await compose()
      const run = await call('bash', {
        command: 'python3 -q',
        description: 'python',
        tty: true,
        run_in_background: true,
      })
      const id = started(run.text)
      const type = (args: Record<string, unknown>) => call('write_stdin', { task_id: id, ...args })
      expect((await type({ until: '>>> ' })).text).toContain('>>> ')
      const sum = await type({ text: '2+2', keys: ['Enter'], until: '>>> ' })
      expect(sum.text).toMatch(/2\+2\n4\n>>> /)
      await type({ text: 'def triple(x):', keys: ['Enter'], until: '... ' })
      await type({ text: '    return 3 * x', keys: ['Enter'], until: '... ' })
      await type({ keys: ['Enter'], until: '>>> ' })
      expect((await type({ text: 'triple(14)', keys: ['Enter'], until: '>>> ' })).text).toContain('42')
      const end = await type({ keys: ['C-d'], wait_ms: 10_000 })
      expect(end.text).toMatch(/\[status: completed, exit code: 0\]$/)
    },
  )

  it('answers a y/n prompt and a password prompt; the password is never shown', async () => {
    const { call } = await compose()
    const script =
      'read -r -p "Proceed? [y/n] " a; read -r -s -p "Password: " p; echo; echo "answer=$a length=${#p}"'
    const id = started(
      (await call('bash', { command: script, description: 'asks', tty: true, run_in_background: true })).text,
    )
    const type = (args: Record<string, unknown>) => call('write_stdin', { task_id: id, ...args })
    expect((await type({ until: '[y/n] ' })).text).toContain('Proceed? [y/n] ')
    expect((await type({ text: 'y', keys: ['Enter'], until: 'Password: ' })).text).toContain('Password: ')
    const done = await type({ text: 'hunter2', keys: ['Enter'], wait_ms: 10_000 })
    expect(done.text).toContain('answer=y length=7')
    expect(done.text).not.toContain('hunter2')
    const screen = await call('bash_output', { task_id: id, screen: true })
    expect(screen.text).not.toContain('hunter2')
    expect(screen.text).toContain('answer=y length=7')
  })

  it.skipIf(!has('/usr/bin/less'))('pages less with keys: the screen shows the right lines', async () => {
    const { call } = await compose()
    const dir = tempDir()
    writeFileSync(join(dir, 'long.txt'), Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n'))
    const run = await call('bash', {
      command: 'less long.txt',
      workdir: dir,
      description: 'pages',
      tty: true,
      run_in_background: true,
    })
    const id = started(run.text)
    const first = await call('write_stdin', { task_id: id, until: 'line 23', screen: true })
    expect(first.text).toMatch(
      /^\[screen 80x24, full-screen program; cursor at row 24, column \d+\]\nline 1\n/,
    )
    const paged = await call('write_stdin', { task_id: id, keys: ['Space'], until: 'line 46', screen: true })
    expect(paged.text.split('\n')[1]).toBe('line 24')
    const back = await call('write_stdin', {
      task_id: id,
      keys: ['Up', 'Up'],
      until: 'line 22',
      screen: true,
    })
    expect(back.text.split('\n')[1]).toBe('line 22')
    const quit = await call('write_stdin', { task_id: id, text: 'q', wait_ms: 10_000 })
    expect(quit.text).toMatch(/\[status: completed, exit code: 0\]$/)
  })

  it.skipIf(!has('/usr/bin/vim'))('edits a file in vim and writes it with :wq', async () => {
    const { call } = await compose()
    const dir = tempDir()
    const file = join(dir, 'notes.txt')
    writeFileSync(file, 'first\n')
    const run = await call('bash', {
      command: 'vim -u NONE -i NONE -n notes.txt',
      workdir: dir,
      description: 'edits',
      tty: true,
      run_in_background: true,
    })
    const id = started(run.text)
    const opened = await call('write_stdin', { task_id: id, screen: true, wait_ms: 10_000 })
    expect(opened.text.split('\n')[1]).toBe('first')
    await call('write_stdin', { task_id: id, text: 'Gohello from the model', keys: ['Escape'] })
    const end = await call('write_stdin', { task_id: id, text: ':wq', keys: ['Enter'], wait_ms: 10_000 })
    expect(end.text).toMatch(/\[status: completed, exit code: 0\]$/)
    expect(readFileSync(file, 'utf8')).toBe('first\nhello from the model\n')
  })

  it.skipIf(!has('/usr/bin/top'))('shows top on the screen, as top -b shows it on the stream', async () => {
    const { call } = await compose()
    const batch = await call('bash', { command: 'top -b -n 1 | head -3', description: 'top once', tty: true })
    expect(batch.text).toMatch(/^top - /)
    const id = started(
      (await call('bash', { command: 'top -d 0.2', description: 'top', tty: true, run_in_background: true }))
        .text,
    )
    const screen = await call('write_stdin', { task_id: id, until: 'PID', screen: true })
    const rows = screen.text.split('\n')
    expect(rows[0]).toMatch(/^\[screen 80x24[,;]/)
    expect(rows[1]).toMatch(/^top - /)
    expect(rows.some((row) => /PID\s+USER/.test(row))).toBe(true)
    const quit = await call('write_stdin', { task_id: id, text: 'q', wait_ms: 10_000 })
    expect(quit.text).toMatch(/\[status: completed, exit code: 0\]$/)
  })
})

describe('write_stdin refuses, and nothing else is affected', () => {
  it("a task on pipes, another session's task, an unknown key, oversized input, an ended task", async () => {
    const { call } = await compose()
    const piped = started(
      (await call('bash', { command: 'sleep 30', description: 's', run_in_background: true })).text,
    )
    const onPipes = await call('write_stdin', { task_id: piped, text: 'x' })
    expect(onPipes).toMatchObject({ isError: true })
    expect(onPipes.text).toContain(`task ${piped} does not run on a terminal`)
    const id = started(
      (await call('bash', { command: 'cat', description: 'c', tty: true, run_in_background: true })).text,
    )
    const theirs = await call('write_stdin', { task_id: id, text: 'x' }, 'bob')
    expect(theirs.isError).toBe(true)
    const unknown = await call('write_stdin', { task_id: id, text: 'typed?', keys: ['Hyper'] })
    expect(unknown).toMatchObject({ isError: true })
    expect(unknown.text).toContain('unknown key "Hyper"')
    const large = await call('write_stdin', { task_id: id, text: 'x'.repeat(70_000) })
    expect(large.text).toContain('a send types at most 65536')
    const badSize = await call('write_stdin', { task_id: id, columns: 100 })
    expect(badSize.text).toContain('a resize gives both columns and rows')
    // Nothing of the refused calls was typed: cat shows only what follows.
    const ok = await call('write_stdin', { task_id: id, text: 'ok', keys: ['Enter'], until: 'ok\nok\n' })
    expect(ok.text).toBe('ok\nok\n\n[status: running]')
    const end = await call('write_stdin', { task_id: id, keys: ['C-d'], wait_ms: 10_000 })
    expect(end.text).toMatch(/\[status: completed, exit code: 0\]$/)
    const late = await call('write_stdin', { task_id: id, text: 'late' })
    expect(late).toMatchObject({ isError: true })
    expect(late.text).toContain('takes no more input')
    const noTty = await call('bash', { command: 'true', description: 't', columns: 100 })
    expect(noTty.text).toContain('only a command with tty: true has a size')
    // The task on pipes ran on, untouched.
    expect((await call('bash_output', { task_id: piped })).text).toContain('[status: running]')
  })

  it('bash_kill hangs a terminal up: its session hears SIGHUP', async () => {
    const { call } = await compose()
    const script = 'trap "echo hung up >> hup.log; exit 0" HUP; echo ready; while :; do sleep 0.05; done'
    const dir = tempDir()
    const id = started(
      (
        await call('bash', {
          command: script,
          workdir: dir,
          description: 'h',
          tty: true,
          run_in_background: true,
        })
      ).text,
    )
    await call('write_stdin', { task_id: id, until: 'ready' })
    expect((await call('bash_kill', { task_id: id })).text).toBe(`killed background task ${id}`)
    expect(readFileSync(join(dir, 'hup.log'), 'utf8')).toBe('hung up\n')
  })

  it('a flood on a terminal (yes) is read in bounded pieces and stopped', async () => {
    const { call, runtime } = await compose()
    const id = started(
      (await call('bash', { command: 'yes', description: 'y', tty: true, run_in_background: true })).text,
    )
    const read = await call('write_stdin', { task_id: id, wait_ms: 500 })
    expect(read.text.length).toBeLessThan(40_000)
    expect(read.text).toContain('y\ny\n')
    expect((await call('bash_output', { task_id: id, screen: true })).text).toMatch(/\ny\ny\n/)
    expect(runtime).toBeDefined()
    await call('bash_kill', { task_id: id })
  })
})

describe('the hyperhive profile on a terminal', () => {
  it.skipIf(!has('/usr/bin/python3'))(
    'run with tty, send keys until the prompt, status with the screen; send to a task on pipes is refused',
    async () => {
      const { call, tools } = await compose({ profile: 'hyperhive' })
      expect(tools.list().map((tool) => tool.name)).toContain('send')
      const run = await call('run', { cmd: 'python3 -q', tty: true, name: 'py', wait_seconds: 0 })
      expect(run.text).toBe('task started: id=py')
      const send = (args: Record<string, unknown>) => call('send', { id: 'py', ...args })
      expect((await send({ until: '>>> ' })).text).toContain('>>> ')
      expect((await send({ text: '6*7', keys: ['Enter'], until: '>>> ' })).text).toMatch(/6\*7\n42\n>>> /)
      const status = await call('status', { id: 'py', screen: true })
      const report = JSON.parse(status.text) as { status: string; screen: string; stdout_tail: string }
      expect(report.status).toBe('running')
      expect(report.stdout_tail).toMatch(/6\*7\n42\n>>> $/)
      expect(report.screen.split('\n').slice(0, 4)).toEqual([
        '[screen 80x24; cursor at row 3, column 5]',
        '>>> 6*7',
        '42',
        '>>> ',
      ])
      const ended = await send({ keys: ['C-d'], wait_ms: 10_000 })
      expect(ended.text).toMatch(/exit code: 0\]$/)
      await call('run', { cmd: 'sleep 30', name: 'piped', wait_seconds: 0 })
      const refused = await call('send', { id: 'piped', text: 'x' })
      expect(refused.isError).toBe(true)
      expect(refused.text).toContain('task piped does not run on a terminal')
      await call('kill', { id: 'piped', force: true })
    },
  )
})
