// Seed 001's sandbox modes under the real mechanisms: denials reported with the seed's marker and
// hint, workspace-write's writable set, a once-only escalation, and an attacker's ways around them.
import { randomUUID } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { unixDatagramSink } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { BashError } from '../src/index.js'
import { ESCALATION_TEXTS } from '../src/modes.js'
import { compose, tempDir } from './helpers.js'
import { answering, deniedTail, MECHANISMS, openDir } from './sandbox-helpers.js'

const write = (path: string) => ({ command: `echo written > ${path}`, description: 'Write a file' })

/** The attacker's dgsend.py (issue 26, F3): a datagram socket pair, then sendto() each target. */
const DGSEND = [
  'import errno, os, socket, sys',
  'for t in sys.argv[1:]:',
  '    addr = "\\0" + t[1:] if t.startswith("@") else t',
  '    try:',
  '        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)',
  '    except OSError as e:',
  '        print(t, "socketpair", errno.errorcode[e.errno]); continue',
  '    try:',
  '        a.sendto(b"from uid %d" % os.getuid(), addr); print(t, "SENT")',
  '    except OSError as e: print(t, errno.errorcode[e.errno])',
].join('\n')

describe.each(MECHANISMS)('bash sandbox modes under %s', (mechanism) => {
  it('read-only denies a write in the working directory and reports the marker and the hint', async () => {
    const work = openDir('work')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: mechanism })
    const denied = await call('bash', write('f'))
    expect(denied.isError).toBe(false)
    expect(denied.text.endsWith(deniedTail('read-only'))).toBe(true)
    expect(denied.result.meta).toMatchObject({ sandboxMode: 'read-only', sandboxDenied: true })
    expect(existsSync(join(work, 'f'))).toBe(false)
    // Reading is allowed, and a run that fails for another reason is no denial.
    const other = await call('bash', { command: 'cat /etc/hostname >/dev/null; exit 3', description: 'Fail' })
    expect(other.text).toBe('(no output)\n[exit code: 3]')
  })

  it('a settled background task denied by the sandbox carries the marker on every read', async () => {
    const work = openDir('work')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: mechanism })
    const args = { ...write('bg'), run_in_background: true, wait_seconds: 10 }
    const waited = await call('bash', args)
    expect(waited.text.endsWith(deniedTail('read-only'))).toBe(true)
    const read = await call('bash_output', { task_id: 'bash-1' })
    expect(read.text).toBe(
      `(no new output)\n[status: completed, exit code: 1]\n${deniedTail('read-only').split('\n').slice(0, 2).join('\n')}`,
    )
    expect(existsSync(join(work, 'bg'))).toBe(false)
  })

  it('workspace-write writes in the working directory and is denied elsewhere ($HOME)', async () => {
    const work = openDir('work')
    const home = openDir('home')
    const { call } = await compose({ sandbox: 'workspace-write', workdir: work }, { sandbox: mechanism })
    expect((await call('bash', write(join(work, 'f')))).text).toBe('(no output)')
    expect(readFileSync(join(work, 'f'), 'utf8')).toBe('written\n')
    const command = `export HOME=${home}; echo written > "$HOME/f"`
    const denied = await call('bash', { command, description: 'Write in home' })
    expect(denied.text.endsWith(deniedTail('workspace-write'))).toBe(true)
    expect(existsSync(join(home, 'f'))).toBe(false)
  })

  it('an escalation approved once writes; the next call without one is denied again', async () => {
    const work = openDir('work')
    const approval = answering('allowed-once')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: mechanism, approval })
    const escalated = await call('bash', {
      ...write('once'),
      sandbox_permissions: 'workspace-write',
      justification: 'The test writes its output file.',
    })
    expect(escalated.text).toBe('(no output)')
    expect(existsSync(join(work, 'once'))).toBe(true)
    expect(approval.asked).toMatchObject([
      {
        sessionId: 'alice',
        tool: 'bash',
        command: 'echo written > once',
        justification: 'The test writes its output file.',
        mode: 'workspace-write',
      },
    ])
    const again = await call('bash', write('twice'))
    expect(again.text.endsWith(deniedTail('read-only'))).toBe(true)
    expect(existsSync(join(work, 'twice'))).toBe(false)
  })

  it('F3 (issue 26): a read-only command reaches no host datagram socket through a socket pair, by path or abstract name', async () => {
    const place = openDir('dgram')
    const sink = await unixDatagramSink([join(place, 'dg.sock'), `@tv-bash-f3-${randomUUID()}`])
    try {
      const { call } = await compose(
        { sandbox: 'read-only', workdir: openDir('work') },
        { sandbox: mechanism },
      )
      const command = `/usr/bin/python3 -c '${DGSEND}' ${sink.targets.join(' ')}`
      const sent = await call('bash', { command, description: 'Send datagrams' })
      const expected = sink.targets.map((t) => `${t} socketpair EPERM\n`).join('')
      expect({ text: sent.text, received: await sink.drain() }).toEqual({ text: expected, received: [] })
    } finally {
      await sink.close()
    }
  })

  it('read-only: a symlink or a /proc/self/root path out of the writable set is denied', async () => {
    const work = openDir('work')
    const outside = openDir('outside')
    symlinkSync(outside, join(work, 'escape'))
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: mechanism })
    const attempts = [
      'echo x > escape/via-link',
      `echo x > /proc/self/root${outside}/via-proc`,
      `echo x > /proc/$$/root${work}/via-pid`,
      // The writable /tmp (bwrap's private one; Landlock has none) does not lead out either.
      ...(mechanism === 'bwrap' ? [`ln -s ${outside} /tmp/l; echo x > /tmp/l/via-tmp`] : []),
    ]
    for (const command of attempts) {
      const denied = await call('bash', { command, description: 'Try to get out' })
      expect(denied.text, command).toContain('[sandbox: file access denied under read-only mode]')
    }
    for (const name of ['via-link', 'via-proc', 'via-tmp'])
      expect(existsSync(join(outside, name))).toBe(false)
    expect(existsSync(join(work, 'via-pid'))).toBe(false)
  })
})

describe('bash sandbox modes: a session lowers its own mode, never raises it', () => {
  it('bash_sandbox_mode narrows the session; widening is refused; other sessions keep theirs', async () => {
    const work = openDir('work')
    const { call, tools } = await compose({ sandbox: 'workspace-write', workdir: work }, { sandbox: 'bwrap' })
    expect((await call('bash_sandbox_mode', { mode: 'read-only' })).text).toBe(
      'sandbox mode of this session: read-only (was workspace-write)',
    )
    expect((await call('bash', write('a'))).text.endsWith(deniedTail('read-only'))).toBe(true)
    const raise = await call('bash_sandbox_mode', { mode: 'workspace-write' })
    expect(raise).toMatchObject({
      isError: true,
      text: 'Error: sandbox mode "workspace-write" is wider than this session\'s current "read-only" mode; a session can only lower its mode (one command can ask for more with sandbox_permissions)',
    })
    expect((await call('bash', write('b'), 'bob')).text).toBe('(no output)')
    expect(existsSync(join(work, 'b'))).toBe(true)
    const noSession = await tools.call(
      'bash_sandbox_mode',
      { mode: 'read-only' },
      { signal: AbortSignal.timeout(5000) },
    )
    expect(noSession.content).toEqual([
      { type: 'text', text: 'Error: invalid call: only a session has a standing mode' },
    ])
  })

  it('a mode the mechanism cannot honour is refused at start-up', async () => {
    await expect(compose({ sandbox: 'read-only' })).rejects.toThrow(
      'tool-bash: the read-only sandbox mode needs a sandbox mechanism: start toolvisor with --sandbox bwrap, landlock or auto',
    )
    expect(ESCALATION_TEXTS.notAvailable).toContain('no sandboxing executor')
  })
})

// As root the commands run as the sandbox user (decision 0010): what a mode grants must be theirs.
describe.runIf(process.geteuid?.() === 0)('bash sandbox modes as root: the sandbox user', () => {
  it('a working directory the sandbox user cannot read is refused at start-up (BASH_ERR_SANDBOX)', async () => {
    const work = tempDir('tv-bash-closed-') // 0700, root's
    const refused = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap' }).catch(
      (e) => e,
    )
    // The kernel reports the plugin's failure; the cause is tool-bash's own error.
    const cause = (refused as Error).cause
    expect(BashError.is(cause) && cause.code).toBe('BASH_ERR_SANDBOX')
    expect((cause as Error).message).toContain(
      `tool-bash: the read-only sandbox mode cannot run in ${work}: `,
    )
  })

  it('an approved escalation to a mode the sandbox user cannot hold fails with why, running nothing', async () => {
    const work = tempDir('tv-bash-readable-')
    chmodSync(work, 0o755) // readable, not writable, by the sandbox user
    const approval = answering('allowed-once')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap', approval })
    const result = await call('bash', {
      ...write('f'),
      sandbox_permissions: 'workspace-write',
      justification: 'The test writes its output file.',
    })
    expect(result.isError).toBe(true)
    expect(result.text).toContain(`Error: the workspace-write sandbox mode cannot run in ${work}: `)
    expect(existsSync(join(work, 'f'))).toBe(false)
  })
})

/** TIOCSTI: a byte typed into the terminal's input, as if from its keyboard (the attack `--new-session` guards). */
const TIOCSTI = [
  'import errno, fcntl, termios',
  'try:',
  '    fcntl.ioctl(0, termios.TIOCSTI, b"x"); print("TIOCSTI typed")',
  'except OSError as e: print("TIOCSTI", errno.errorcode[e.errno])',
].join('\n')

describe.each(MECHANISMS)(
  'bash on a terminal (tty: true) under %s: confined exactly as without one',
  (mechanism) => {
    it('read-only denies the same writes, and reports the denial from the terminal stream', async () => {
      const work = openDir('work')
      const outside = openDir('outside')
      symlinkSync(outside, join(work, 'escape'))
      const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: mechanism })
      const denied = await call('bash', { ...write('f'), tty: true })
      expect(denied.text.endsWith(deniedTail('read-only'))).toBe(true)
      expect(denied.result.meta).toMatchObject({ sandboxMode: 'read-only', sandboxDenied: true })
      const attempts = ['echo x > escape/via-link', `echo x > /proc/self/root${outside}/via-proc`]
      for (const command of attempts) {
        const out = await call('bash', { command, description: 'Try to get out', tty: true })
        expect(out.text, command).toContain('[sandbox: file access denied under read-only mode]')
      }
      expect(existsSync(join(work, 'f'))).toBe(false)
      for (const name of ['via-link', 'via-proc']) expect(existsSync(join(outside, name))).toBe(false)
    })

    it('the terminal is its controlling terminal (C-c is SIGINT), TIOCSTI is refused, no host socket is reached', async () => {
      const place = openDir('dgram')
      const sink = await unixDatagramSink([join(place, 'dg.sock')])
      try {
        const { call } = await compose(
          { sandbox: 'read-only', workdir: openDir('work') },
          { sandbox: mechanism },
        )
        const probes = await call('bash', {
          command: `/usr/bin/python3 -c '${TIOCSTI}'; /usr/bin/python3 -c '${DGSEND}' ${sink.targets.join(' ')}; tty >/dev/null && echo has-tty`,
          description: 'Probe the terminal',
          tty: true,
        })
        expect(probes.text).toBe(`TIOCSTI EPERM\n${sink.targets[0]} socketpair EPERM\nhas-tty\n`)
        expect(await sink.drain()).toEqual([])
        const script = 'trap "echo interrupted; exit 5" INT; echo ready; while :; do sleep 0.05; done'
        const run = await call('bash', {
          command: script,
          description: 'Wait',
          tty: true,
          run_in_background: true,
        })
        const id = /started background task (\S+)/.exec(run.text)![1]
        await call('write_stdin', { task_id: id, until: 'ready' })
        const interrupted = await call('write_stdin', { task_id: id, keys: ['C-c'], wait_ms: 10_000 })
        expect(interrupted.text).toMatch(/interrupted\n\n\[status: completed, exit code: 5\]$/)
      } finally {
        await sink.close()
      }
    })
  },
)
