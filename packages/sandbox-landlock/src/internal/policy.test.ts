import type { SandboxPolicy } from '@toolvisor/launchers'
import { describe, expect, it } from 'vitest'
import { interpretFeatures } from './launcher.js'
import { type DirEntry, launcherArgs, readAround, refusal } from './policy.js'
import { fieldOf } from './preflight.js'

const minimum = { read: ['/usr', '/etc'], write: ['/dev/null'] }
const noPidNs = { available: false, why: 'unshare: Operation not permitted' } as const
const at = (abi: number, pidNamespace: { available: true } | typeof noPidNs = noPidNs) => ({
  abi,
  pidNamespace,
})
const policy: SandboxPolicy = {
  toolDir: '/opt/tools/t',
  executable: '/opt/tools/t/run',
  read: ['/data/in'],
  write: ['/data/out'],
  net: 'host',
  tmp: 'shared',
  declared: ['fs.read', 'fs.write'],
  pins: {},
}

describe('launcherArgs', () => {
  it('the ABI qualified, exec minimum, tool dir, declared paths, /tmp, user, in that order', () => {
    expect(launcherArgs(policy, { user: 'svc', group: 'data' }, at(7), minimum)).toEqual([
      ...['--expect-abi', '7', '--ro', '/usr', '--ro', '/etc', '--rw', '/dev/null', '--ro', '/opt/tools/t'],
      ...['--ro', '/data/in', '--rw', '/data/out', '--rw', '/tmp', '--user', 'svc:data', '--'],
    ])
  })

  it('grants an executable that links out of the tool directory; net: none adds the TCP rules from ABI 4', () => {
    const none = {
      ...policy,
      executable: '/usr/local/lib/t/run',
      read: [],
      write: [],
      net: 'none',
      tmp: 'none',
    } as const
    expect(launcherArgs(none, undefined, at(7), minimum)).toEqual([
      ...['--expect-abi', '7', '--ro', '/usr', '--ro', '/etc', '--rw', '/dev/null', '--ro', '/opt/tools/t'],
      ...['--ro', '/usr/local/lib/t/run', '--deny-tcp', '--'],
    ])
    // Below ABI 4 the filter's net: none variant (chosen by the mechanism) is the only wall.
    expect(launcherArgs(none, undefined, at(3), minimum).slice(-2)).toEqual(['/usr/local/lib/t/run', '--'])
  })

  it("a network allow list: connect to the route's port, bind to each published port; no route, no arguments", () => {
    const listed = { ...policy, net: { allow: ['registry.npmjs.org'], deny: [], publish: [3000] } }
    const route = { kind: 'port', port: 41234, publish: [3000, 8080] } as const
    expect(launcherArgs(listed, undefined, at(7), minimum, { network: route }).slice(-9)).toEqual([
      ...['--rw', '/tmp', '--tcp-connect', '41234', '--tcp-bind', '3000', '--tcp-bind', '8080', '--'],
    ])
    // Without its port the list would run with every TCP port open: never.
    for (const network of [undefined, { ...route, kind: 'namespace' } as const]) {
      expect(() => launcherArgs(listed, undefined, at(7), minimum, network ? { network } : {})).toThrow(
        'launcherArgs: the network allow list of /opt/tools/t/run needs a port route',
      )
    }
    // A route given for another policy changes nothing.
    expect(launcherArgs(policy, undefined, at(7), minimum, { network: route })).not.toContain('--tcp-connect')
  })

  it('passes grants as descriptors when asked, numbered in order', () => {
    let next = 5
    const args = launcherArgs(policy, undefined, at(7), minimum, { grants: { descriptor: () => next++ } })
    expect(args).toEqual([
      ...['--expect-abi', '7', '--ro', '/usr', '--ro', '/etc', '--rw', '/dev/null', '--ro-fd', '5'],
      ...['--ro-fd', '6', '--rw-fd', '7', '--rw', '/tmp', '--'],
    ])
  })

  it('asks for the pid namespace where the probe made one (the launcher then requires it)', () => {
    expect(launcherArgs(policy, undefined, at(7, { available: true }), minimum).slice(-2)).toEqual([
      '--pid-ns',
      '--',
    ])
    expect(launcherArgs(policy, undefined, at(7), minimum)).not.toContain('--pid-ns')
  })

  it('does not treat a sibling sharing a prefix as inside the tool directory', () => {
    expect(launcherArgs({ ...policy, executable: '/opt/tools/t2/run' }, undefined, at(7), minimum)).toContain(
      '/opt/tools/t2/run',
    )
  })
})

describe('refusal', () => {
  const available = { available: true, launcher: '/l', abi: 9, pidNamespace: { available: true } } as const
  it('accepts net: none, refuses a write grant above /proc and /sys, and run_as for non-root', () => {
    expect(refusal({ ...policy, net: 'none' }, undefined, available, 1000)).toEqual({ ok: true })
    expect(refusal({ ...policy, write: ['/'] }, undefined, available, 0)).toMatchObject({
      ok: false,
      field: 'fs.write',
    })
    expect(refusal(policy, { user: 'svc' }, available, 1000)).toMatchObject({ ok: false, field: 'run_as' })
    expect(refusal(policy, { user: 'svc' }, available, 0)).toEqual({ ok: true })
  })

  it('accepts a network allow list where the ABI has TCP port rules (4), refuses it below naming net', () => {
    const listed = { ...policy, net: { allow: ['example.com'], deny: [], publish: [] } }
    expect(refusal(listed, undefined, { ...available, abi: 4 }, 0)).toEqual({ ok: true })
    expect(refusal(listed, undefined, { ...available, abi: 3 }, 0)).toEqual({
      ok: false,
      field: 'net',
      reason:
        "a network allow list needs Landlock's TCP port rules (ABI >= 4) to keep connections to the proxy's port; this kernel has ABI 3",
      fix: 'use --sandbox bwrap (or --sandbox auto, which picks it for this tool), or declare net: host or none',
    })
  })
})

describe('fieldOf', () => {
  it.each([
    ['--ro /data/in', 'fs.read'],
    ['--rw /data/out', 'fs.write'],
    ['--rw /tmp', 'tmp'],
    ['--ro /usr', 'mechanism'],
    ['--user svc', 'run_as'],
    ['drop privileges to svc', 'run_as'],
    ['--deny-tcp', 'net'],
    ['--tcp-connect 1', 'net'],
    ['--tcp-bind 3000', 'net'],
    ['landlock_restrict_self', 'mechanism'],
  ])('%s -> %s', (what, field) => {
    expect(fieldOf(what, policy)).toBe(field)
  })
})

describe('interpretFeatures', () => {
  it('reads the ABI and whether a pid namespace can be made, or says why the launcher is unusable', () => {
    expect(interpretFeatures('/l', { status: 0, stdout: 'abi 7\npid-ns yes\n', stderr: '' })).toEqual({
      available: true,
      launcher: '/l',
      abi: 7,
      pidNamespace: { available: true },
    })
    const refused =
      'pid-ns no: unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC): Operation not permitted\n'
    expect(interpretFeatures('/l', { status: 0, stdout: `abi 6\n${refused}`, stderr: '' })).toEqual({
      available: true,
      launcher: '/l',
      abi: 6,
      pidNamespace: {
        available: false,
        why: 'unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWIPC): Operation not permitted',
      },
    })
    expect(interpretFeatures('/l', { status: 0, stdout: '7\n', stderr: '' })).toMatchObject({
      available: false,
      reason:
        'the Landlock launcher /l answered "7" to --features instead of "abi N" and "pid-ns yes|no: why"',
    })
    expect(
      interpretFeatures('/l', {
        spawnError: { code: 'EACCES', message: 'spawn /l EACCES' },
        status: null,
        stdout: '',
        stderr: '',
      }),
    ).toMatchObject({ available: false, reason: 'the Landlock launcher /l did not run: spawn /l EACCES' })
    expect(
      interpretFeatures('/l', {
        status: 0,
        stdout: 'abi 0\npid-ns yes\n',
        stderr:
          'toolvisor-landlock: Landlock: disabled at boot (add landlock to the lsm= kernel parameter)\n',
      }),
    ).toMatchObject({
      available: false,
      reason: 'Landlock is not available: disabled at boot (add landlock to the lsm= kernel parameter)',
    })
  })
})

describe("toolvisor's own paths (decision 0095)", () => {
  const tree: Record<string, DirEntry[]> = {
    '/': [
      { name: 'usr', kind: 'dir' },
      { name: 'home', kind: 'dir' },
      { name: 'bin', kind: 'link' },
      { name: 'vmlinuz', kind: 'other' },
    ],
    '/home': [
      { name: 'u', kind: 'dir' },
      { name: 'v', kind: 'dir' },
    ],
    '/home/u': [
      { name: 'work', kind: 'dir' },
      { name: 'state', kind: 'dir' },
      { name: 'state-old', kind: 'dir' },
      { name: 'escape', kind: 'link' },
    ],
  }
  const list = (dir: string) => tree[dir] ?? []

  it('readAround grants every entry on the way down but the one that leads to a hidden path, never a link', () => {
    expect(readAround('/', ['/home/u/state'], list)).toEqual([
      '/usr',
      '/home/u/work',
      '/home/u/state-old',
      '/home/v',
      '/vmlinuz',
    ])
  })

  it('launcherArgs narrows a read rule of / around a secret, and keeps other rules whole', () => {
    const own = [{ path: '/home/u/state', kind: 'secret', what: 'state' }] as const
    const args = launcherArgs(
      { ...policy, read: ['/'], write: [], tmp: 'none', own },
      undefined,
      at(7),
      minimum,
      { list },
    )
    expect(args).toEqual([
      ...['--expect-abi', '7', '--ro', '/usr', '--ro', '/etc', '--rw', '/dev/null', '--ro', '/opt/tools/t'],
      ...['--ro', '/usr', '--ro', '/home/u/work', '--ro', '/home/u/state-old'],
      ...['--ro', '/home/v', '--ro', '/vmlinuz', '--'],
    ])
  })

  it('refuses a writable rule holding a secret or the installation, naming the field; a read rule above the installation is fine', () => {
    const available = { available: true, launcher: '/l', abi: 7, pidNamespace: noPidNs } as const
    const secret = { path: '/data/out/state', kind: 'secret', what: "toolvisor's state directory" } as const
    expect(refusal({ ...policy, own: [secret] }, undefined, available, 0)).toMatchObject({
      ok: false,
      field: 'fs.write',
      reason:
        "/data/out/state, toolvisor's state directory, lies in the write grant /data/out: Landlock cannot keep a path below a writable grant out of reach",
    })
    const inTmp = { path: '/tmp/tv-state', kind: 'secret', what: 'state' } as const
    expect(refusal({ ...policy, own: [inTmp] }, undefined, available, 0)).toMatchObject({
      ok: false,
      field: 'tmp',
    })
    const code = { path: '/data/in/lib', kind: 'code', what: 'installation' } as const
    expect(refusal({ ...policy, own: [code] }, undefined, available, 0)).toEqual({ ok: true })
    expect(
      refusal({ ...policy, own: [{ ...code, path: '/data/out/lib' }] }, undefined, available, 0),
    ).toMatchObject({
      ok: false,
      field: 'fs.write',
    })
  })

  it('keeps the installation below a writable rule read-only where a mount namespace can be made; a secret is still refused', () => {
    const withNs = { available: true, launcher: '/l', abi: 7, pidNamespace: { available: true } } as const
    const code = { path: '/tmp/checkout/dist', kind: 'code', what: "toolvisor's installation" } as const
    const read = { path: '/data/in/lib', kind: 'code', what: "toolvisor's installation" } as const
    const own = { ...policy, own: [code, read] }
    expect(refusal(own, undefined, withNs, 0)).toEqual({ ok: true })
    const args = launcherArgs(own, undefined, at(7, { available: true }), minimum)
    // Only the one a writable rule (here tmp: shared's /tmp) holds is mounted read-only over.
    expect(args.slice(-4)).toEqual(['--pid-ns', '--ro-over', '/tmp/checkout/dist', '--'])
    expect(refusal(own, undefined, { ...withNs, pidNamespace: noPidNs }, 0)).toMatchObject({
      ok: false,
      field: 'tmp',
    })
    const secret = { path: '/tmp/tv-state', kind: 'secret', what: 'state' } as const
    expect(refusal({ ...policy, own: [secret] }, undefined, withNs, 0)).toMatchObject({
      ok: false,
      field: 'tmp',
    })
  })
})
