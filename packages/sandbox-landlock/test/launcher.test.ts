import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type UdpSink, udpSink } from '@toolvisor/process-runtime/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { builtLauncher } from '../src/internal/launcher.js'
import { execMinimum } from '../src/internal/policy.js'
import {
  filters,
  type Given,
  isRoot,
  launcherLifecycle,
  launcherRun,
  node,
  nodeOutsideUsr,
  probeTool,
  run,
  tempDir,
  writeTool,
} from './helpers.js'

const source = fileURLToPath(new URL('../native/landlock-launcher.c', import.meta.url))
const hasCc = spawnSync('cc', ['--version']).status === 0
const abi = Number(execFileSync(builtLauncher, ['--abi'], { encoding: 'utf8' }).trim())
const minimum = execMinimum()
const base = [
  ...minimum.read.flatMap((p) => ['--ro', p]),
  ...minimum.write.flatMap((p) => ['--rw', p]),
  ...(nodeOutsideUsr ? ['--ro', node] : []),
]
const testUser = launcherLifecycle('tvll')

/** Runs the launcher with `args` and the filter on descriptor 3 (see `launcherRun`). */
const launch = (args: string[], env: Record<string, string> = {}, given: Given = 'host') =>
  run(launcherRun(builtLauncher, args, env, given))

/** A file holding the host program, opened for a spawnSync caller to pass as descriptor 3. */
function filterFile(): number {
  const file = join(tempDir(), 'filter.bpf')
  writeFileSync(file, filters.host)
  return openSync(file, 'r')
}

/** Runs the probe tool under the launcher with `flags`; returns its answer. */
async function probe(flags: string[], ops: unknown[][], first: string[] = [], given: Given = 'host') {
  const tool = probeTool()
  const result = await launch(
    [...first, ...base, '--ro', tool.dir, ...flags, '--', tool.file, JSON.stringify(ops)],
    {},
    given,
  )
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout) as Record<string, unknown>
}

describe('the C source', () => {
  it.skipIf(!hasCc)('compiles clean with cc -std=gnu99 -O2 -Wall -Wextra -Werror (needs cc)', () => {
    const out = join(tempDir(), 'launcher')
    const result = spawnSync('cc', ['-std=gnu99', '-O2', '-Wall', '-Wextra', '-Werror', '-o', out, source], {
      encoding: 'utf8',
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(execFileSync(out, ['--abi'], { encoding: 'utf8' })).toBe(`${abi}\n`)
  })
})

describe('--abi', () => {
  it('prints the kernel ABI; --max-abi (tests only) lowers it, never raises it', () => {
    expect(abi).toBeGreaterThan(0)
    const at = (value: string) =>
      spawnSync(builtLauncher, ['--max-abi', value, '--abi'], { encoding: 'utf8' })
    expect(at('3').stdout).toBe('3\n')
    expect(at('99').stdout).toBe(`${abi}\n`)
    expect(at('0')).toMatchObject({
      status: 0,
      stdout: '0\n',
      stderr: 'toolvisor-landlock: Landlock: hidden by --max-abi 0\n',
    })
    expect(at('x')).toMatchObject({
      status: 125,
      stdout: '',
      stderr: 'toolvisor-landlock: --max-abi: not a non-negative integer\n',
    })
  })

  it('reads nothing from its environment: LL_MAX_ABI, the old test knob, changes nothing', () => {
    const result = spawnSync(builtLauncher, ['--abi'], { encoding: 'utf8', env: { LL_MAX_ABI: '0' } })
    expect(result.stdout).toBe(`${abi}\n`)
  })
})

describe('--expect-abi', () => {
  it('refuses to run the tool when the ABI applied is not the one qualified', async () => {
    expect(await launch(['--expect-abi', String(abi - 1), ...base, '--', 'true'])).toEqual({
      code: 125,
      signal: null,
      stdout: '',
      stderr: `toolvisor-landlock: --expect-abi: Landlock ABI ${abi} applies here, toolvisor qualified the tool at ABI ${abi - 1}: reload the tool\n`,
    })
    expect((await launch(['--expect-abi', String(abi), ...base, '--', 'true'])).code).toBe(0)
  })
})

describe('fails closed with 125 and one line', () => {
  it.each([
    [['--ro'], 'toolvisor-landlock: --ro: missing value\n'],
    [['--bogus', '--', 'true'], 'toolvisor-landlock: --bogus: unknown option\n'],
    [['--ro', '/usr'], 'toolvisor-landlock: usage: missing -- before the command\n'],
    [['--ro', '/usr', '--'], 'toolvisor-landlock: usage: missing command after --\n'],
    [['--user', 'a', '--user', 'b', '--', 'true'], 'toolvisor-landlock: --user: given twice\n'],
    [['--tcp-connect'], 'toolvisor-landlock: --tcp-connect: missing value\n'],
    [
      ['--tcp-connect', '0', '--', 'true'],
      'toolvisor-landlock: --tcp-connect 0: not a TCP port (1..65535)\n',
    ],
    [
      ['--tcp-bind', '65536', '--', 'true'],
      'toolvisor-landlock: --tcp-bind 65536: not a TCP port (1..65535)\n',
    ],
    [['--tcp-bind', ' 80', '--', 'true'], 'toolvisor-landlock: --tcp-bind  80: not a TCP port (1..65535)\n'],
    [['--tcp-bind', '80x', '--', 'true'], 'toolvisor-landlock: --tcp-bind 80x: not a TCP port (1..65535)\n'],
    [
      ['--deny-tcp', '--tcp-connect', '80', '--', 'true'],
      'toolvisor-landlock: --deny-tcp: cannot be given with --tcp-connect or --tcp-bind\n',
    ],
  ])('%j', async (args, stderr) => {
    expect(await launch(args)).toEqual({ code: 125, signal: null, stdout: '', stderr })
  })

  it('a missing path: the message names it, the command does not run', async () => {
    const missing = join(tempDir(), 'nope')
    const marker = join(tempDir(), 'ran')
    const result = await launch([...base, '--rw', missing, '--', '/bin/sh', '-c', `echo > ${marker}`])
    expect(result).toEqual({
      code: 125,
      signal: null,
      stdout: '',
      stderr: `toolvisor-landlock: --rw ${missing}: No such file or directory\n`,
    })
    expect(existsSync(marker)).toBe(false)
  })

  it('--deny-tcp at ABI 3 (--max-abi 3)', async () => {
    expect(await launch(['--max-abi', '3', ...base, '--deny-tcp', '--', 'true'])).toEqual({
      code: 125,
      signal: null,
      stdout: '',
      stderr: 'toolvisor-landlock: --deny-tcp: needs Landlock ABI >= 4, this kernel has ABI 3\n',
    })
  })

  it('--tcp-connect and --tcp-bind at ABI 3 (--max-abi 3): never run with TCP open', async () => {
    expect(
      await launch(['--max-abi', '3', ...base, '--tcp-bind', '3000', '--tcp-connect', '80', '--', 'true']),
    ).toEqual({
      code: 125,
      signal: null,
      stdout: '',
      stderr: 'toolvisor-landlock: --tcp-bind: needs Landlock ABI >= 4, this kernel has ABI 3\n',
    })
  })

  it('Landlock missing (--max-abi 0)', async () => {
    expect(await launch(['--max-abi', '0', ...base, '--', 'true'])).toEqual({
      code: 125,
      signal: null,
      stdout: '',
      stderr: 'toolvisor-landlock: Landlock: hidden by --max-abi 0\n',
    })
  })

  it('a descriptor flag without an open descriptor', async () => {
    expect((await launch([...base, '--ro-fd', '77', '--', 'true'])).stderr).toBe(
      'toolvisor-landlock: --ro-fd 77: not an open descriptor (>= 3)\n',
    )
  })

  it('an unknown user', async () => {
    const result = await launch([...base, '--user', 'tvll-no-such-user', '--', 'true'])
    expect(result.code).toBe(125)
    expect(result.stderr).toBe('toolvisor-landlock: --user tvll-no-such-user: no such user\n')
  })

  it.skipIf(!isRoot)('--user run by a non-root caller (needs root to create the user)', () => {
    const u = testUser()!
    // A copy the user can reach: the checkout may lie under a directory other users cannot enter.
    const launcher = join(tempDir(), 'landlock-launcher')
    copyFileSync(builtLauncher, launcher)
    chmodSync(launcher, 0o755)
    const fd = filterFile()
    const result = spawnSync(launcher, ['--seccomp-fd', '3', ...base, '--user', u.user, '--', 'true'], {
      encoding: 'utf8',
      uid: u.uid,
      gid: u.gid,
      stdio: ['ignore', 'pipe', 'pipe', fd],
    })
    closeSync(fd)
    expect(result.status).toBe(125)
    expect(result.stderr).toBe(`toolvisor-landlock: drop privileges to ${u.user}: Operation not permitted\n`)
  })
})

describe('exec failures', () => {
  it('127 when the command does not exist, 126 when it cannot be executed (not granted)', async () => {
    const dir = tempDir()
    const tool = writeTool(join(dir, 't.sh'), '#!/bin/sh\necho no\n')
    expect(await launch([...base, '--', join(dir, 'missing')])).toEqual({
      code: 127,
      signal: null,
      stdout: '',
      stderr: `toolvisor-landlock: exec ${join(dir, 'missing')}: No such file or directory\n`,
    })
    expect(await launch([...base, '--', tool])).toEqual({
      code: 126,
      signal: null,
      stdout: '',
      stderr: `toolvisor-landlock: exec ${tool}: Permission denied\n`,
    })
  })
})

describe('network', () => {
  let tcp: Server
  let tcpPort = 0
  let other: Server
  let otherPort = 0
  let udp: UdpSink
  let udpPort = 0
  let unixDir = ''
  let unixServer: Server

  beforeAll(async () => {
    tcp = createServer((s) => s.end())
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r))
    tcpPort = (tcp.address() as { port: number }).port
    other = createServer((s) => s.end())
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    otherPort = (other.address() as { port: number }).port
    udp = await udpSink()
    udpPort = udp.port
    unixDir = tempDir()
    unixServer = createServer((s) => s.end())
    await new Promise<void>((r) => unixServer.listen(join(unixDir, 'u.sock'), r))
  })
  afterAll(async () => {
    await new Promise((r) => tcp.close(r))
    await new Promise((r) => other.close(r))
    await new Promise((r) => unixServer.close(r))
    await udp.close()
  })

  const ops = () => [
    ['tcp', 'tcp', tcpPort],
    ['udp', 'udp', udpPort],
    ['unix', 'unix', join(unixDir, 'u.sock')],
  ]
  const received = async () => (await udp.drain()).length

  it('without flags TCP and UDP reach host listeners; a unix socket never, even under a grant', async () => {
    expect(await probe(['--ro', unixDir], ops())).toEqual({ tcp: 'ok', udp: 'ok', unix: 'EPERM' })
    expect(await received()).toBe(1)
  })

  it('--deny-tcp: TCP is EACCES, but UDP still gets out (why net: none is not TCP rules alone)', async () => {
    expect(await probe(['--ro', unixDir, '--deny-tcp'], ops())).toEqual({
      tcp: 'EACCES',
      udp: 'ok',
      unix: 'EPERM',
    })
    expect(await received()).toBe(1)
  })

  it('--deny-tcp with the net: none program: TCP and UDP are EPERM, the unix socket too: no socket at all', async () => {
    expect(await probe(['--ro', unixDir, '--deny-tcp'], ops(), [], 'none')).toEqual({
      tcp: 'EPERM',
      udp: 'EPERM',
      unix: 'EPERM',
    })
    expect(await received()).toBe(0)
  })

  it('--tcp-connect P: TCP to P only, another port EACCES; UDP still gets out with the host program', async () => {
    const both = [...ops(), ['other', 'tcp', otherPort]]
    expect(await probe(['--tcp-connect', String(tcpPort)], both)).toEqual({
      tcp: 'ok',
      other: 'EACCES',
      udp: 'ok',
      unix: 'EPERM',
    })
    expect(await received()).toBe(1)
  })

  it('--tcp-connect P with the stream program (a network allow list): TCP to P only, no UDP, no unix socket', async () => {
    const both = [...ops(), ['other', 'tcp', otherPort]]
    expect(await probe(['--tcp-connect', String(tcpPort)], both, [], 'stream')).toEqual({
      tcp: 'ok',
      other: 'EACCES',
      udp: 'EPERM',
      unix: 'EPERM',
    })
    expect(await received()).toBe(0)
  })
})

describe('--seccomp-fd: the program it is given, and nothing else', () => {
  /** A one-instruction program: BPF_RET | BPF_K, SECCOMP_RET_ALLOW. */
  const allowAll = new Uint8Array([0x06, 0, 0, 0, 0x00, 0x00, 0xff, 0x7f])

  it('installs exactly that program: one that allows everything lets the unix socket under a grant through', async () => {
    const dir = tempDir()
    const server = createServer((s) => s.end())
    await new Promise<void>((r) => server.listen(join(dir, 'u.sock'), r))
    try {
      const op = [['unix', 'unix', join(dir, 'u.sock')]]
      expect(await probe(['--ro', dir], op)).toEqual({ unix: 'EPERM' })
      // Landlock below ABI 9 cannot deny it: only the filter did.
      expect(await probe(['--ro', dir], op, [], allowAll)).toEqual({ unix: abi >= 9 ? 'EACCES' : 'ok' })
    } finally {
      await new Promise((r) => server.close(r))
    }
  })

  const refused = (why: string) => ({
    code: 125,
    signal: null,
    stdout: '',
    stderr: `toolvisor-landlock: ${why}\n`,
  })
  it.each([
    [
      'absent',
      'absent' as const,
      '--seccomp-fd: missing: the launcher installs only the filter program it is given',
    ],
    ['empty', new Uint8Array(0), '--seccomp-fd 3: empty: no filter program was written to it'],
    [
      '12 bytes',
      new Uint8Array(12),
      '--seccomp-fd 3: not a whole number of 8-byte instructions (struct sock_filter)',
    ],
    [
      '4097 instructions',
      new Uint8Array(4097 * 8),
      '--seccomp-fd 3: longer than 4096 instructions (BPF_MAXINSNS)',
    ],
    // A load and no return: the kernel checks the program and refuses it.
    [
      'malformed',
      new Uint8Array(8).fill(0),
      '--seccomp-fd 3: the kernel refused the filter program: Invalid argument',
    ],
  ])('fails closed with 125 and the command not run: %s', async (_name, given, why) => {
    const marker = join(tempDir(), 'ran')
    expect(await launch([...base, '--', '/bin/sh', '-c', `echo > ${marker}`], {}, given)).toEqual(
      refused(why),
    )
    expect(existsSync(marker)).toBe(false)
  })

  it('refuses it given twice, or a descriptor that is not open', async () => {
    expect(await launch(['--seccomp-fd', '3', ...base, '--', 'true'])).toEqual(
      refused('--seccomp-fd: given twice'),
    )
    expect(await launch(['--seccomp-fd', '77', ...base, '--', 'true'], {}, 'absent')).toEqual(
      refused('--seccomp-fd 77: not an open descriptor (>= 3)'),
    )
  })
})

describe('scoping (ABI 6)', () => {
  it('signals to a process outside the sandbox are EPERM from ABI 6 on, allowed at --max-abi 5', async () => {
    const op = [['kill', 'kill', process.pid]]
    expect(await probe([], op)).toEqual({ kill: abi >= 6 ? 'EPERM' : 'ok' })
    expect(await probe([], op, ['--max-abi', '5'])).toEqual({ kill: 'ok' })
  })
})

describe('rules on files', () => {
  it('a --rw on a single file grants it alone (directory-only rights are masked)', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'd'))
    writeFileSync(join(dir, 'd', 'f'), 'one')
    writeFileSync(join(dir, 'd', 'g'), 'two')
    expect(
      await probe(
        ['--rw', join(dir, 'd', 'f')],
        [
          ['write', 'write', join(dir, 'd', 'f'), 'changed'],
          ['other', 'write', join(dir, 'd', 'g')],
          ['create', 'write', join(dir, 'd', 'h')],
        ],
      ),
    ).toEqual({ write: 'ok', other: 'EACCES', create: 'EACCES' })
  })
})
