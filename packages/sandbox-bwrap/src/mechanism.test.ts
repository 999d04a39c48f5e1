import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { Launch, SandboxPolicy } from '@toolvisor/launchers'
import { syscallFilter } from '@toolvisor/syscall-filter'
import { afterAll, describe, expect, it } from 'vitest'
import { BwrapError, BwrapErrorCodes } from './errors.js'
import { hostLayout } from './internal/host.js'
import { bwrapMechanism } from './mechanism.js'

const root = mkdtempSync(join(tmpdir(), 'tvbw-wrap-'))
const tool = join(root, 'tool')
const exe = join(tool, 'run')
const data = join(root, 'data')
const sub = join(data, 'sub')
const out = join(root, 'out')
mkdirSync(sub, { recursive: true })
mkdirSync(tool)
mkdirSync(out)
writeFileSync(exe, '#!/bin/sh\n')
afterAll(() => rmSync(root, { recursive: true, force: true }))

const policy = (over: Partial<SandboxPolicy> = {}): SandboxPolicy => ({
  toolDir: tool,
  executable: exe,
  read: [sub, data],
  write: [out],
  net: 'none',
  tmp: 'private',
  declared: ['fs.read', 'fs.write', 'net', 'tmp'],
  pins: {},
  ...over,
})
const launch = (over: Partial<Launch> = {}): Launch => ({
  file: exe,
  args: ['a1', '--', 'a 2'],
  env: { PATH: '/usr/bin' },
  cwd: tool,
  extraFds: [],
  ...over,
})

const layoutArgs = hostLayout().flatMap((entry) =>
  entry.kind === 'symlink' ? ['--symlink', entry.target, entry.path] : ['--ro-bind', entry.path, entry.path],
)

describe('wrap', () => {
  const bwrap = bwrapMechanism({ bwrap: '/usr/bin/bwrap' })

  it('builds the argument set of spec/sandbox.md, in an order where no mount hides a grant', () => {
    const wrapped = bwrap.wrap(launch(), policy(), undefined)
    expect(wrapped.file).toBe('/usr/bin/bwrap')
    expect(wrapped.args).toEqual([
      ...[
        '--unshare-user',
        '--disable-userns',
        '--die-with-parent',
        '--new-session',
        '--unshare-pid',
        '--unshare-ipc',
      ],
      ...['--unshare-net', '--cap-drop', 'ALL'],
      ...['--ro-bind', '/usr', '/usr', ...layoutArgs, '--ro-bind', '/etc', '/etc', '--proc', '/proc'],
      ...['--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp'],
      ...[
        '--ro-bind',
        '/proc/sys',
        '/proc/sys',
        '--ro-bind-try',
        '/proc/sysrq-trigger',
        '/proc/sysrq-trigger',
      ],
      ...['--ro-bind-try', '/proc/irq', '/proc/irq', '--ro-bind-try', '/proc/bus', '/proc/bus'],
      ...['--perms', '1777', '--tmpfs', '/dev/shm', '--perms', '1777', '--tmpfs', '/var/tmp'],
      ...[
        '--ro-bind-fd',
        '3',
        tool,
        '--ro-bind-fd',
        '4',
        data,
        '--bind-fd',
        '5',
        out,
        '--ro-bind-fd',
        '6',
        sub,
      ],
      ...['--seccomp', '7', '--info-fd', '8', '--chdir', tool, '--remount-ro', '/'],
      ...['--', exe, 'a1', '--', 'a 2'],
    ])
    expect(wrapped.extraFds).toEqual([
      ...[tool, data, out, sub].map((path) => ({ kind: 'file', path })),
      { kind: 'data', data: syscallFilter({ net: 'none', ipc: 'namespaced' }) },
      { kind: 'pipe' },
    ])
    expect(wrapped.env).toEqual({ PATH: '/usr/bin' })
    expect(wrapped.cwd).toBe(tool)
  })

  it('numbers its fds after the ones the launch already has; net: host keeps the filter; tmp: shared binds /tmp', () => {
    const wrapped = bwrap.wrap(
      launch({ extraFds: [{ kind: 'pipe' }] }),
      policy({ net: 'host', tmp: 'shared', read: [], write: [] }),
      undefined,
    )
    expect(wrapped.args).not.toContain('--unshare-net')
    expect(wrapped.args.join(' ')).toContain('--dev /dev --bind /tmp /tmp --ro-bind /proc/sys /proc/sys')
    expect(wrapped.args.join(' ')).toContain(
      `--perms 1777 --tmpfs /dev/shm --ro-bind-fd 4 ${tool} --seccomp 5 --info-fd 6 --chdir`,
    )
    expect(wrapped.args).not.toContain('/var/tmp')
    expect(wrapped.extraFds).toEqual([
      { kind: 'pipe' },
      { kind: 'file', path: tool },
      { kind: 'data', data: syscallFilter({ net: 'host', ipc: 'namespaced' }) },
      { kind: 'pipe' },
    ])
  })

  it("runs an allow list in the runtime's namespace (no --unshare-net, the host filter), and refuses one without it", () => {
    const net = { allow: ['registry.npmjs.org'], deny: [], publish: [] }
    const route = { kind: 'namespace' as const, port: 3128, publish: [] }
    const wrapped = bwrap.wrap(launch({ network: route }), policy({ net, read: [], write: [] }), undefined)
    expect(wrapped.args).not.toContain('--unshare-net')
    expect(wrapped.network).toEqual(route)
    expect(wrapped.extraFds).toContainEqual({
      kind: 'data',
      data: syscallFilter({ net: 'host', ipc: 'namespaced' }),
    })
    for (const network of [undefined, { kind: 'port' as const, port: 3128, publish: [] }]) {
      const attempt = () =>
        bwrap.wrap(launch(network ? { network } : {}), policy({ net, read: [], write: [] }), undefined)
      expect(attempt).toThrow(BwrapError)
      expect(attempt).toThrow(/needs the runtime's network namespace, and this launch has none: not started/)
    }
    expect(bwrap.netRoute).toBe('namespace')
  })

  it('binds a grant from a descriptor pinned to what was qualified at load', () => {
    const pins = { [tool]: { identity: '1:2', field: "the tool's directory" } }
    const wrapped = bwrap.wrap(launch(), policy({ read: [], write: [], pins }), undefined)
    expect(wrapped.extraFds[0]).toEqual({ kind: 'file', path: tool, pin: pins[tool] })
  })

  it('binds the executable too when its real path lies outside the granted directories', () => {
    const elsewhere = join(data, 'real-run')
    writeFileSync(elsewhere, '#!/bin/sh\n')
    const args = bwrap.wrap(launch(), policy({ executable: elsewhere, read: [] }), undefined).args.join(' ')
    expect(args).toContain(`--ro-bind-fd 3 ${tool} --bind-fd 4 ${out} --ro-bind-fd 5 ${elsewhere}`)
    expect(bwrap.wrap(launch(), policy({ executable: elsewhere }), undefined).args).not.toContain(elsewhere)
  })

  it('mounts parents before children: a grant of /var or / does not undo the private /tmp, /var/tmp, /dev, /proc', () => {
    const order = (over: Partial<SandboxPolicy>) => {
      const args = bwrap.wrap(launch(), policy({ read: [], write: [], ...over }), undefined).args
      return args.filter(
        (arg, i) =>
          arg.startsWith('/') &&
          (['--ro-bind', '--bind', '--tmpfs', '--proc', '--dev'].includes(args[i - 1] ?? '') ||
            ['--ro-bind-fd', '--bind-fd'].includes(args[i - 2] ?? '')),
      )
    }
    const withVar = order({ read: ['/var'] })
    expect(withVar.indexOf('/var')).toBeLessThan(withVar.indexOf('/var/tmp'))
    const withRoot = order({ read: ['/'] })
    expect(withRoot[0]).toBe('/')
    for (const base of ['/usr', '/etc', '/proc', '/dev', '/tmp', '/dev/shm', '/var/tmp']) {
      expect(withRoot.indexOf(base)).toBeGreaterThan(0)
    }
  })

  it('drops a read grant inside a write grant (grants add up), and keeps / writable when / is a write grant', () => {
    const args = bwrap.wrap(launch(), policy({ read: [sub], write: [data] }), undefined).args
    expect(args).not.toContain(sub)
    expect(args.join(' ')).toContain(`--bind-fd 4 ${data} --seccomp`)
    expect(args.join(' ')).toContain('--remount-ro /')
    const open = bwrap.wrap(launch(), policy({ write: ['/'] }), undefined).args
    expect(open.join(' ')).toContain('--bind-fd 3 / --ro-bind /usr /usr')
    // The host's /sys comes along with /: it stays read-only.
    expect(open.join(' ')).toContain('--ro-bind /sys /sys')
    expect(open).not.toContain('--remount-ro')
  })

  it('starts the tool in the launch cwd when the sandbox shows it, else in the tool directory', () => {
    const chdir = (cwd: string, over: Partial<SandboxPolicy> = {}) => {
      const args = bwrap.wrap(launch({ cwd }), policy(over), undefined).args
      return args[args.indexOf('--chdir') + 1]
    }
    expect(chdir(out)).toBe(out)
    expect(chdir(sub)).toBe(sub)
    expect(chdir('/usr/share')).toBe('/usr/share')
    expect(chdir('/root')).toBe(tool)
    expect(chdir(root)).toBe(tool)
    expect(chdir('/tmp')).toBe(tool)
    expect(chdir('/tmp', { tmp: 'shared' })).toBe('/tmp')
    expect(chdir(join(root, 'missing'))).toBe(tool)
    expect(chdir('/var/tmp', { read: ['/var'] })).toBe(tool) // a private tmpfs covers it
    expect(chdir('/var/lib', { read: ['/var'] })).toBe('/var/lib')
    expect(chdir('/proc', { read: ['/'] })).toBe(tool)
  })

  it('refuses a relative policy path (BWRAP_ERR_RELATIVE_PATH)', () => {
    let caught: unknown
    try {
      bwrap.wrap(launch(), policy({ write: ['state'] }), undefined)
    } catch (error) {
      caught = error
    }
    expect(BwrapError.is(caught)).toBe(true)
    expect((caught as BwrapError).code).toBe(BwrapErrorCodes.RELATIVE_PATH)
    expect((caught as BwrapError).message).toBe(
      `runtime.sandbox.fs.write path "state" is not absolute (tool ${exe}): the runtime must resolve sandbox paths before wrap`,
    )
  })

  it('refuses a declared path that vanished since load (BWRAP_ERR_PATH_MISSING)', () => {
    const gone = join(root, 'gone')
    expect(() => bwrap.wrap(launch(), policy({ read: [gone] }), undefined)).toThrow(
      expect.objectContaining({
        code: 'BWRAP_ERR_PATH_MISSING',
        message: `runtime.sandbox.fs.read path ${gone} does not exist (tool ${exe}): create it, or remove it from the declaration`,
      }),
    )
  })
})

describe('control', () => {
  it('cannot signal before bwrap has told the child pid, nor after its info fd closed without one', () => {
    const info = new PassThrough()
    const control = bwrapMechanism().control!({ pid: 1, extraFds: [undefined, info] })
    expect(control.signal('SIGTERM')).toBe(false)
    info.end('{ "child-pid": ')
    expect(control.signal('SIGTERM')).toBe(false)
    expect(bwrapMechanism().control!({ pid: 1, extraFds: [] }).signal('SIGTERM')).toBe(false)
  })
})
