/**
 * toolvisor's own paths at load (decision 0095): a declared grant at, under or above the state
 * directory, a secret the host named or the envdir root is refused naming the field; a writable
 * grant of the installation too; an operator's policy that reads `/` has them masked instead; and
 * the mechanism is handed the ones the tool's user could reach.
 */
import { chmodSync, copyFileSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SandboxDeclaration } from '@toolvisor/describe-v2'
import { LoadingError } from '@toolvisor/describe-v2'
import { describe, expect, it } from 'vitest'
import { createLaunchers, installation, type SandboxMechanism, type SandboxPolicy } from '../src/index.js'
import { overlap, ownPathsOf, resolvedOwn } from '../src/internal/own-paths.js'
import { readableBy } from '../src/testing.js'
import { fixture, makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0

/** A mechanism that accepts every policy and keeps the last one it qualified. */
function recording(): SandboxMechanism & { policies: SandboxPolicy[] } {
  const policies: SandboxPolicy[] = []
  return {
    name: 'recording',
    handlesRunAs: true,
    policies,
    async qualify(policy) {
      policies.push(policy)
      return { ok: true }
    },
    wrap: (launch) => launch,
    async describe() {
      return { name: 'recording', available: true, enforces: {}, gaps: [] }
    },
  }
}

function setup(
  options: { envdirRoot?: string; ownPaths?: { path: string; kind: 'secret' | 'code'; what: string }[] } = {},
) {
  const mechanism = recording()
  const launchers = createLaunchers()
  launchers.registerSandbox(mechanism)
  const stateDir = tempDir('tv-own-state-')
  const runtime = makeRuntime({ ...options, stateDir, sandbox: 'recording' }, launchers)
  return { runtime, mechanism, stateDir: realpathSync(stateDir) }
}

function tool(dir = tempDir('tv-own-tool-')): { dir: string; path: string } {
  chmodSync(dir, 0o755)
  const path = join(dir, 'report.mjs')
  copyFileSync(fixture('report.mjs'), path)
  chmodSync(path, 0o755)
  return { dir: realpathSync(dir), path: realpathSync(path) }
}

const declared = (fs: Partial<SandboxDeclaration['fs']>): SandboxDeclaration => ({
  fs: { read: [], write: [], ...fs },
  net: 'host',
  tmp: 'shared',
  declared: ['fs.read', 'fs.write'],
})

const input = (
  at: { dir: string; path: string },
  sandbox: SandboxDeclaration,
  ownPaths?: 'refuse' | 'mask',
) => ({
  path: at.path,
  dir: at.dir,
  slug: 'report',
  process: processSpec({ output: output('chunks') }),
  runtime: runtimeSpec({ sandbox }),
  ...(ownPaths ? { ownPaths } : {}),
})

async function refusal(promise: Promise<unknown>): Promise<LoadingError> {
  try {
    await promise
  } catch (error) {
    if (LoadingError.is(error)) return error
    throw error
  }
  throw new Error('expected a LoadingError')
}

describe('own paths', () => {
  it('refuses a read grant at, under or above the state directory, naming the field and what it is', async () => {
    const { runtime, stateDir } = setup()
    const at = tool()
    for (const [path, words] of [
      [stateDir, `${stateDir} is toolvisor's state directory`],
      [join(stateDir, 'runs'), `${join(stateDir, 'runs')} lies in ${stateDir}, toolvisor's state directory`],
      [
        join(stateDir, '..'),
        `${realpathSync(join(stateDir, '..'))} holds ${stateDir}, toolvisor's state directory`,
      ],
    ] as const) {
      mkdirSync(join(stateDir, 'runs'), { recursive: true })
      const error = await refusal(runtime.prepare(input(at, declared({ read: [path] }))))
      expect(error.code).toBe('RUNTIME_ERR_OWN_PATH')
      expect(error.field).toBe('$.runtime.sandbox.fs.read[0]')
      expect(error.reason).toContain(words)
      expect(error.reason).toContain("nothing of toolvisor's own is visible from a sandbox")
    }
  })

  it('refuses a tool whose own directory holds the state directory (its directory is always granted)', async () => {
    const parent = tempDir('tv-own-parent-')
    const mechanism = recording()
    const launchers = createLaunchers()
    launchers.registerSandbox(mechanism)
    const stateDir = join(parent, 'state')
    mkdirSync(stateDir)
    const runtime = makeRuntime({ stateDir, sandbox: 'recording' }, launchers)
    const error = await refusal(runtime.prepare(input(tool(parent), declared({}))))
    expect(error.field).toBe('$.runtime.sandbox')
    expect(error.reason).toContain(
      `the tool's directory ${realpathSync(parent)} holds ${realpathSync(stateDir)}`,
    )
  })

  it('refuses the envdir root and a secret the host names, but not a sibling sharing a prefix', async () => {
    const envdirRoot = tempDir('tv-own-envdirs-')
    const secret = join(tempDir('tv-own-secret-'), 'serve.token')
    writeFileSync(secret, 'x', { mode: 0o600 })
    const { runtime } = setup({
      envdirRoot,
      ownPaths: [{ path: secret, kind: 'secret', what: 'the bearer token' }],
    })
    const at = tool()
    const envdirs = await refusal(runtime.prepare(input(at, declared({ read: [envdirRoot] }))))
    expect(envdirs.reason).toContain("the envdir root (every tool's secrets)")
    const token = await refusal(runtime.prepare(input(at, declared({ write: [join(secret, '..')] }))))
    expect(token.field).toBe('$.runtime.sandbox.fs.write[0]')
    expect(token.reason).toContain(`holds ${realpathSync(secret)}, the bearer token`)
    const sibling = tempDir('tv-own-envdirs-x-')
    chmodSync(sibling, 0o755)
    await expect(runtime.prepare(input(at, declared({ read: [sibling] })))).resolves.toBeDefined()
  })

  it('refuses a write grant of the installation; reads of it load', async () => {
    const [code] = installation()
    expect(code).toBeDefined()
    const { runtime } = setup()
    const at = tool()
    const error = await refusal(runtime.prepare(input(at, declared({ write: [code!] }))))
    expect(error.reason).toContain(
      "toolvisor's installation: a tool that could write it would change the code toolvisor runs",
    )
    const read = runtime.prepare(input(at, declared({ read: [code!] })))
    if (isRoot && !readableBy('nobody', code!)) {
      // A checkout the sandbox user cannot enter (under a 0700 mktemp -d): refused for that alone.
      expect((await refusal(read)).code).toBe('RUNTIME_ERR_ACCESS')
    } else await expect(read).resolves.toBeDefined()
  })

  it('an operator policy that reads / loads with the state directory masked: the mechanism is handed it', async () => {
    const { runtime, mechanism, stateDir } = setup()
    const at = tool()
    const prepared = await runtime.prepare(input(at, declared({ read: ['/'] }), 'mask'))
    expect(prepared.sandbox?.policy.read).toEqual(['/'])
    const own = mechanism.policies.at(-1)?.own ?? []
    // As root, with no run_as, a sandboxed tool runs as the sandbox user, who cannot reach a 0700
    // state directory: the kernel keeps it out, and the mechanism need not. As any other user, it can.
    expect(own.some((entry) => entry.path === stateDir)).toBe(!isRoot)
    // Masked or not, a grant at or under it is still refused.
    const error = await refusal(runtime.prepare(input(at, declared({ read: [stateDir] }), 'mask')))
    expect(error.code).toBe('RUNTIME_ERR_OWN_PATH')
  })
})

describe('ownPathsOf', () => {
  it('resolves links, keeps a path not made yet under its real parent, and drops what a secret holds', () => {
    const dir = realpathSync(tempDir('tv-own-resolve-'))
    mkdirSync(join(dir, 'state'))
    expect(resolvedOwn(join(dir, 'state', 'not-yet', 'serve.sock'))).toBe(
      join(dir, 'state', 'not-yet', 'serve.sock'),
    )
    const own = ownPathsOf({
      stateDir: join(dir, 'state'),
      ownPaths: [{ path: join(dir, 'state', 'serve.token'), kind: 'secret', what: 'token' }],
    })
    expect(own.filter((entry) => entry.kind === 'secret').map((entry) => entry.path)).toEqual([
      join(dir, 'state'),
    ])
    expect(own.some((entry) => entry.kind === 'code')).toBe(true)
  })

  it('overlap: at, under, above, and none for a sibling sharing a prefix', () => {
    expect(overlap('/a/b', '/a/b')).toBe('at-or-under')
    expect(overlap('/a/b/c', '/a/b')).toBe('at-or-under')
    expect(overlap('/a', '/a/b')).toBe('above')
    expect(overlap('/', '/a/b')).toBe('above')
    expect(overlap('/a/bc', '/a/b')).toBeUndefined()
  })
})
