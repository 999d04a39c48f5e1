import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import type { RuntimeSpec, SandboxDeclaration } from '@toolvisor/describe-v2'
import { LoadingError } from '@toolvisor/describe-v2'
import { runuserRunAs } from '@toolvisor/run-as'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createLaunchers,
  type Launch,
  type Launchers,
  type SandboxMechanism,
  setprivRunAs,
} from '../src/index.js'
import { readEnvdir } from '../src/internal/envdir.js'
import { createTestUser, loggedMechanism as guideMechanism, type TestUser } from '../src/testing.js'
import { fixture, makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0

function toolDir(): { dir: string; path: string } {
  const dir = tempDir('tv-tool-')
  // As root, sandboxed tools run as the sandbox user (nobody), who must be able to enter it.
  chmodSync(dir, 0o755)
  const path = join(dir, 'report.mjs')
  copyFileSync(fixture('report.mjs'), path)
  chmodSync(path, 0o755)
  return { dir, path }
}

const input = (path: string, dir: string, runtime: Partial<RuntimeSpec>) => ({
  path,
  dir,
  slug: 'report',
  process: processSpec({ output: output('chunks') }),
  runtime: runtimeSpec(runtime),
})

async function loadError(promise: Promise<unknown>): Promise<LoadingError> {
  try {
    await promise
  } catch (error) {
    if (LoadingError.is(error)) return error
    throw error
  }
  throw new Error('expected a LoadingError')
}

const sandbox = (partial: Partial<SandboxDeclaration>): SandboxDeclaration => ({
  fs: { read: [], write: [] },
  net: 'host',
  tmp: 'shared',
  declared: [],
  ...partial,
})

describe('envdir', () => {
  it('reads variables the daemontools way', () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'TOKEN'), 'abc \t\nsecond line\n')
    writeFileSync(join(dir, 'MULTI'), 'a\0b')
    writeFileSync(join(dir, 'GONE'), '')
    writeFileSync(join(dir, 'BAD=NAME'), 'x')
    mkdirSync(join(dir, 'subdir'))
    expect(readEnvdir(dir)).toEqual({ set: { MULTI: 'a\nb', TOKEN: 'abc' }, unset: ['GONE'] })
  })

  it('refuses envdir without an envdir root, naming the field', async () => {
    const runtime = makeRuntime()
    const { dir, path } = toolDir()
    const error = await loadError(runtime.prepare(input(path, dir, { envdir: 'secrets' })))
    expect(error.code).toBe('RUNTIME_ERR_ENVDIR')
    expect(error.message).toBe(
      `${path}: $.runtime.envdir: declared, but no envdir root is configured: start toolvisor with --envdir-root DIR`,
    )
  })

  it('reads the envdir at every start, after inherited and before environment', async () => {
    const root = tempDir('tv-envroot-')
    mkdirSync(join(root, 'secrets'))
    writeFileSync(join(root, 'secrets', 'TOKEN'), 'first\n')
    writeFileSync(join(root, 'secrets', 'OVERRIDDEN'), 'from-envdir\n')
    writeFileSync(join(root, 'secrets', 'HOME'), '')
    const runtime = makeRuntime({ envdirRoot: root })
    const { dir, path } = toolDir()
    const prepared = await runtime.prepare(
      input(path, dir, { envdir: 'secrets', environment: { OVERRIDDEN: 'env' } }),
    )
    const run = async () => {
      const proc = runtime.start({
        tool: prepared,
        argv: ['run'],
        env: { REPORT_ENV: 'TOKEN,OVERRIDDEN,HOME' },
      })
      await proc.exit
      return JSON.parse(proc.output.stdout().head.toString()).env
    }
    expect(await run()).toEqual({ TOKEN: 'first', OVERRIDDEN: 'env', HOME: null })
    writeFileSync(join(root, 'secrets', 'TOKEN'), 'rotated\n')
    expect((await run()).TOKEN).toBe('rotated')
    const missing = await loadError(runtime.prepare(input(path, dir, { envdir: 'nope' })))
    expect(missing.message).toBe(
      `${path}: $.runtime.envdir: ${join(root, 'nope')} is not a directory: create it under the envdir root`,
    )
  })

  it('a dangling or unreadable envdir entry fails the start naming the field and the path', async () => {
    const root = tempDir('tv-envroot-')
    mkdirSync(join(root, 'secrets'))
    const runtime = makeRuntime({ envdirRoot: root })
    const { dir, path } = toolDir()
    const prepared = await runtime.prepare(input(path, dir, { envdir: 'secrets' }))
    symlinkSync(join(root, 'gone'), join(root, 'secrets', 'TOKEN'))
    const proc = runtime.start({ tool: prepared, argv: ['run'] })
    expect(await proc.exit).toMatchObject({
      status: 'failed',
      reason: 'spawn-failed',
      why: `$.runtime.envdir: ${join(root, 'secrets', 'TOKEN')} cannot be read: ENOENT (a dangling link, or removed since load); the tool was not started: fix the envdir`,
    })
  })
})

describe('rundir', () => {
  it('creates the rundir relative to the tool and runs there', async () => {
    const runtime = makeRuntime()
    const { dir, path } = toolDir()
    const prepared = await runtime.prepare(input(path, dir, { rundir: 'state/work' }))
    expect(existsSync(join(dir, 'state/work'))).toBe(true)
    const proc = runtime.start({ tool: prepared, argv: ['run'] })
    await proc.exit
    expect(JSON.parse(proc.output.stdout().head.toString()).cwd).toBe(join(dir, 'state/work'))
  })

  it('creates it again when it was deleted after load', async () => {
    const runtime = makeRuntime()
    const { dir, path } = toolDir()
    const prepared = await runtime.prepare(input(path, dir, { rundir: 'state' }))
    rmSync(join(dir, 'state'), { recursive: true })
    const proc = runtime.start({ tool: prepared, argv: ['run'] })
    expect(await proc.exit).toMatchObject({ status: 'exited', code: 0 })
    expect(JSON.parse(proc.output.stdout().head.toString()).cwd).toBe(join(dir, 'state'))
  })
})

describe('run_as', () => {
  let account: TestUser | undefined
  beforeAll(() => {
    if (isRoot) account = createTestUser('tvrt')
  })
  afterAll(() => account?.remove())

  it('refuses run_as when no run_as mechanism is configured, naming the field', async () => {
    const runtime = makeRuntime()
    const { dir, path } = toolDir()
    const error = await loadError(runtime.prepare(input(path, dir, { runAs: { user: 'nobody' } })))
    expect(error.code).toBe('RUNTIME_ERR_RUN_AS')
    expect(error.field).toBe('$.runtime.run_as')
    expect(error.reason).toBe(
      'declared, but no run_as mechanism is configured: start toolvisor with --run-as setpriv',
    )
  })

  it('refuses an unknown run_as mechanism, listing the known ones (10.14)', async () => {
    const launchers = createLaunchers()
    launchers.registerRunAs(setprivRunAs())
    launchers.registerRunAs(runuserRunAs())
    const runtime = makeRuntime({ runAs: 'sudo' }, launchers)
    const { dir, path } = toolDir()
    const error = await loadError(runtime.prepare(input(path, dir, { runAs: { user: 'nobody' } })))
    expect(error.message).toBe(
      `${path}: $.runtime.run_as: the run_as mechanism "sudo" is not available (known: setpriv, runuser): start toolvisor with --run-as setpriv or --run-as runuser`,
    )
  })

  it('refuses a user that does not exist', async () => {
    const launchers = createLaunchers()
    launchers.registerRunAs(setprivRunAs())
    const runtime = makeRuntime({ runAs: 'setpriv', runAsAllow: ['no-such-user-x'] }, launchers)
    const { dir, path } = toolDir()
    const error = await loadError(runtime.prepare(input(path, dir, { runAs: { user: 'no-such-user-x' } })))
    expect(error.message).toBe(
      `${path}: $.runtime.run_as: no such user "no-such-user-x" (fix: create the user or fix run_as.user)`,
    )
  })

  it.skipIf(!isRoot)(
    'runs as the user with its supplementary groups (needs root to switch users)',
    async () => {
      const launchers = createLaunchers()
      launchers.registerRunAs(setprivRunAs())
      const { user, group, uid } = account!
      const runtime = makeRuntime({ runAs: 'setpriv', runAsAllow: [user] }, launchers)
      const dir = tempDir('tv-runas-')
      chmodSync(dir, 0o755)
      const path = join(dir, 'whoami.sh')
      writeFileSync(path, '#!/bin/sh\nid -un; id -Gn; touch "$1"; echo "$USER $HOME"\n')
      chmodSync(path, 0o755)
      const out = join(tempDir('tv-runas-out-'), 'written')
      chmodSync(join(out, '..'), 0o777)
      // runuser with a group keeps the supplementary groups too, and both set HOME and USER.
      const runuser = createLaunchers()
      runuser.registerRunAs(runuserRunAs())
      const viaRunuser = await makeRuntime({ runAs: 'runuser', runAsAllow: [user] }, runuser).prepare({
        ...input(path, dir, { runAs: { user, group: user } }),
        slug: 'whoami',
      })
      const other = makeRuntime({ runAs: 'runuser', runAsAllow: [user] }, runuser).start({
        tool: viaRunuser,
        argv: [`${out}-2`],
      })
      expect(await other.exit).toMatchObject({ code: 0 })
      const [, groups2, identity] = other.output.stdout().head.toString().trim().split('\n')
      expect(groups2?.split(' ')).toContain(group)
      const home = execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).split(':')[5]
      expect(identity).toBe(`${user} ${home}`)
      const prepared = await runtime.prepare({ ...input(path, dir, { runAs: { user } }), slug: 'whoami' })
      const proc = runtime.start({ tool: prepared, argv: [out] })
      expect(await proc.exit).toMatchObject({ code: 0 })
      const [name, groups] = proc.output.stdout().head.toString().trim().split('\n')
      expect(name).toBe(user)
      expect(groups?.split(' ')).toContain(group)
      expect(statSync(out).uid).toBe(uid)
    },
  )
})

/** A registry with the setpriv run_as mechanism: as root, sandboxed tools run as the sandbox user through it. */
function withSetpriv(launchers: Launchers): Launchers {
  launchers.registerRunAs(setprivRunAs())
  return launchers
}

/** A mechanism whose verdict a test chooses: for the refusal and auto paths. */
function stubMechanism(
  log: string[],
  verdict: Awaited<ReturnType<SandboxMechanism['qualify']>> = { ok: true },
): SandboxMechanism {
  return {
    name: 'logged',
    handlesRunAs: false,
    qualify: async () => verdict,
    wrap(launch: Launch): Launch {
      log.push(`${launch.file} ${launch.args.join(' ')}`)
      return { ...launch, env: { ...launch.env, SANDBOXED_BY: 'logged' } }
    },
    describe: async () => ({
      name: 'logged',
      available: true,
      enforces: {},
      gaps: ['enforces nothing: for tests'],
    }),
  }
}

describe('sandbox declarations', () => {
  it('refuses a sandbox declaration when no mechanism is configured', async () => {
    const runtime = makeRuntime()
    const { dir, path } = toolDir()
    const error = await loadError(
      runtime.prepare(input(path, dir, { sandbox: sandbox({ declared: ['net'], net: 'none' }) })),
    )
    expect(error.code).toBe('RUNTIME_ERR_SANDBOX')
    expect(error.message).toBe(
      `${path}: $.runtime.sandbox: declared, but no sandbox mechanism is configured: start toolvisor with --sandbox bwrap, landlock or auto`,
    )
  })

  it("runs a tool through a third-party mechanism with no change to the runtime (the guide's none-but-logged)", async () => {
    const log: string[] = []
    const launchers = withSetpriv(createLaunchers())
    launchers.registerSandbox(guideMechanism((line) => log.push(line)))
    const runtime = makeRuntime({ sandbox: 'none-but-logged' }, launchers)
    const { dir, path } = toolDir()
    // A declaration that asks for nothing is accepted, wrapped and run.
    const prepared = await runtime.prepare(input(path, dir, { sandbox: sandbox({}) }))
    expect(prepared.sandbox?.policy).toMatchObject({ read: [], write: [], toolDir: dir, declared: [] })
    const proc = runtime.start({ tool: prepared, argv: ['run'], env: { REPORT_ENV: 'SANDBOXED_BY' } })
    await proc.exit
    // It wraps the final exec stage, which brings the tool's own environment with it.
    expect(log).toEqual([
      expect.stringMatching(
        new RegExp(`^/proc/self/fd/\\d+ --status-fd (\\d+) --env-bytes \\d+ --env-fd \\1 -- ${path} run$`),
      ),
    ])
    // A variable the mechanism adds to its own (clean) environment never reaches the tool.
    expect(JSON.parse(proc.output.stdout().head.toString()).env).toEqual({ SANDBOXED_BY: null })
    // One that asks for something it cannot enforce is refused, never weakened.
    const error = await loadError(
      runtime.prepare(
        input(path, dir, { sandbox: sandbox({ declared: ['fs.read'], fs: { read: ['.'], write: [] } }) }),
      ),
    )
    expect(error.message).toBe(
      `${path}: $.runtime.sandbox.fs.read: none-but-logged cannot honour it: none-but-logged enforces nothing (fix: use --sandbox bwrap)`,
    )
  })

  it('names the field and the mechanism when a mechanism refuses', async () => {
    const launchers = withSetpriv(createLaunchers())
    launchers.registerSandbox(
      stubMechanism([], { ok: false, field: 'tmp', reason: 'no mount namespace', fix: 'use bwrap' }),
    )
    const runtime = makeRuntime({ sandbox: 'logged' }, launchers)
    const { dir, path } = toolDir()
    const error = await loadError(
      runtime.prepare(input(path, dir, { sandbox: sandbox({ declared: ['tmp'], tmp: 'private' }) })),
    )
    expect(error.message).toBe(
      `${path}: $.runtime.sandbox.tmp: logged cannot honour it: no mount namespace (fix: use bwrap)`,
    )
    const unknown = makeRuntime({ sandbox: 'podman' }, launchers)
    expect((await loadError(unknown.prepare(input(path, dir, { sandbox: sandbox({}) })))).reason).toBe(
      'the sandbox mechanism "podman" is not installed (known: logged)',
    )
  })

  it('refuses a missing path and a relative symlink that leads outside the tool, naming the field', async () => {
    const launchers: Launchers = withSetpriv(createLaunchers())
    launchers.registerSandbox(stubMechanism([]))
    const runtime = makeRuntime({ sandbox: 'logged' }, launchers)
    const { dir, path } = toolDir()
    const missing = await loadError(
      runtime.prepare(
        input(path, dir, { sandbox: sandbox({ fs: { read: ['/etc', '/no/such/place'], write: [] } }) }),
      ),
    )
    expect(missing.message).toBe(
      `${path}: $.runtime.sandbox.fs.read[1]: "/no/such/place" does not exist (/no/such/place); create it or remove it`,
    )
    symlinkSync('/etc', join(dir, 'state'))
    const outside = await loadError(
      runtime.prepare(input(path, dir, { sandbox: sandbox({ fs: { read: [], write: ['state'] } }) })),
    )
    expect(outside.message).toBe(
      `${path}: $.runtime.sandbox.fs.write[0]: "state" is a symlink to /etc, outside the tool's directory; declare the target itself`,
    )
    // An absolute symlink is resolved to its target: the grant is the target.
    const target = tempDir('tv-target-')
    chmodSync(target, 0o777) // the sandbox user writes it
    const link = join(tempDir('tv-link-'), 'link')
    symlinkSync(target, link)
    const ok = await runtime.prepare(
      input(path, dir, { sandbox: sandbox({ fs: { read: [], write: [link] } }) }),
    )
    expect(ok.sandbox?.policy.write).toEqual([target])
    expect(readFileSync(path).length).toBeGreaterThan(0)
  })

  it('refuses a grant that is neither a directory nor a regular file (a FIFO, a device), naming the field', async () => {
    const launchers: Launchers = withSetpriv(createLaunchers())
    launchers.registerSandbox(stubMechanism([]))
    const runtime = makeRuntime({ sandbox: 'logged' }, launchers)
    const { dir, path } = toolDir()
    execFileSync('mkfifo', [join(dir, 'pipe')])
    const fifo = await loadError(
      runtime.prepare(input(path, dir, { sandbox: sandbox({ fs: { read: ['.', './pipe'], write: [] } }) })),
    )
    expect(fifo.message).toBe(
      `${path}: $.runtime.sandbox.fs.read[1]: "./pipe" is a FIFO (${realpathSync(join(dir, 'pipe'))}); a grant is a directory or a regular file: grant the directory that holds it, or remove it`,
    )
    const device = await loadError(
      runtime.prepare(input(path, dir, { sandbox: sandbox({ fs: { read: [], write: ['/dev/null'] } }) })),
    )
    expect(device.message).toBe(
      `${path}: $.runtime.sandbox.fs.write[0]: "/dev/null" is a character device (/dev/null); a grant is a directory or a regular file: grant the directory that holds it, or remove it`,
    )
  })

  it('auto takes the first of bwrap, landlock that qualifies, and names every refusal otherwise', async () => {
    const refuse = (name: string, field: 'net' | 'tmp', reason: string): SandboxMechanism => ({
      ...stubMechanism([], { ok: false, field, reason }),
      name,
    })
    const accept = (name: string): SandboxMechanism => ({ ...stubMechanism([]), name })
    const { dir, path } = toolDir()
    const decl = { sandbox: sandbox({ declared: ['net'], net: 'none' }) }

    const both = withSetpriv(createLaunchers())
    both.registerSandbox(accept('landlock'))
    both.registerSandbox(accept('bwrap'))
    const picked = await makeRuntime({ sandbox: 'auto' }, both).prepare(input(path, dir, decl))
    expect(picked.sandbox?.mechanism.name).toBe('bwrap')

    const fallback = withSetpriv(createLaunchers())
    fallback.registerSandbox(refuse('bwrap', 'net', 'bwrap: not found'))
    fallback.registerSandbox(accept('landlock'))
    expect(
      (await makeRuntime({ sandbox: 'auto' }, fallback).prepare(input(path, dir, decl))).sandbox?.mechanism
        .name,
    ).toBe('landlock')

    const none = withSetpriv(createLaunchers())
    none.registerSandbox(refuse('bwrap', 'net', 'bwrap: not found'))
    none.registerSandbox(refuse('landlock', 'net', 'needs ABI 9'))
    const error = await loadError(makeRuntime({ sandbox: 'auto' }, none).prepare(input(path, dir, decl)))
    expect(error.message).toBe(
      `${path}: $.runtime.sandbox: no mechanism honours every declared field (auto): bwrap: net: bwrap: not found; landlock: net: needs ABI 9`,
    )
  })
})
