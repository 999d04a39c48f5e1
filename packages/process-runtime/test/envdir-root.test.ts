/** Decision 0092: an envdir root that group or others may read or write is refused, or accepted with a warning. */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LoadingError } from '@toolvisor/describe-v2'
import { describe, expect, it } from 'vitest'
import { createLaunchers, Runtime } from '../src/index.js'
import { fixture, makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

/** An envdir root with one tool's envdir in it, at `mode`. */
function envdirRoot(mode: number): string {
  const root = tempDir('tv-envroot-')
  mkdirSync(join(root, 'vault'))
  writeFileSync(join(root, 'vault', 'API_KEY'), 'k\n')
  chmodSync(root, mode)
  return root
}

const refusal = (root: string, mode: string) =>
  `--envdir-root ${root}: readable or writable by group or others (mode ${mode}), so any local user, and a bash command that reads /, can read every tool's secrets: chmod 700 ${root}, or start toolvisor with --envdir-permissions warn to accept it`
const warning = (root: string, mode: string) =>
  `--envdir-root ${root}: readable or writable by group or others (mode ${mode}), so any local user, and a bash command that reads /, can read every tool's secrets: chmod 700 ${root} (accepted: --envdir-permissions warn)`

/** A tool declaring `envdir: vault`. */
function vaultTool() {
  const dir = tempDir('tv-tool-')
  const path = join(dir, 'report.mjs')
  copyFileSync(fixture('report.mjs'), path)
  chmodSync(path, 0o755)
  return {
    path,
    dir,
    slug: 'report',
    process: processSpec({ output: output('chunks') }),
    runtime: runtimeSpec({ envdir: 'vault' }),
  }
}

describe('the envdir root (decision 0092)', () => {
  it('is refused at start when group or others may read it (the default), with RUNTIME_ERR_ENVDIR_PERMISSIONS', () => {
    for (const mode of [0o755, 0o750, 0o701, 0o703]) {
      const root = envdirRoot(mode)
      expect(
        () => new Runtime({ stateDir: tempDir('tv-state-'), envdirRoot: root }, createLaunchers()),
      ).toThrow(
        expect.objectContaining({
          code: 'RUNTIME_ERR_ENVDIR_PERMISSIONS',
          message: refusal(root, `0${mode.toString(8)}`),
        }),
      )
    }
  })

  it('is used, and the warning kept once for the operator, with envdirPermissions warn', async () => {
    const root = envdirRoot(0o755)
    const runtime = makeRuntime({ envdirRoot: root, envdirPermissions: 'warn' })
    expect(runtime.warnings()).toEqual([warning(root, '0755')])
    const prepared = await runtime.prepare(vaultTool())
    expect(prepared.envdir).toBe(join(root, 'vault'))
    expect(runtime.warnings()).toHaveLength(1)
  })

  it('is fine at 0700, and not refused for a tool that declares none', async () => {
    const root = envdirRoot(0o700)
    const runtime = makeRuntime({ envdirRoot: root })
    expect(runtime.warnings()).toEqual([])
    expect((await runtime.prepare(vaultTool())).envdir).toBe(join(root, 'vault'))
  })

  it('made (or opened up) after the start, is refused at the first use, naming $.runtime.envdir', async () => {
    const root = join(tempDir('tv-envparent-'), 'later')
    const runtime = makeRuntime({ envdirRoot: root })
    mkdirSync(join(root, 'vault'), { recursive: true })
    chmodSync(root, 0o711)
    const tool = vaultTool()
    const error = await runtime.prepare(tool).catch((caught: unknown) => caught)
    expect(LoadingError.is(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'RUNTIME_ERR_ENVDIR_PERMISSIONS',
      field: '$.runtime.envdir',
      message: `${tool.path}: $.runtime.envdir: ${refusal(root, '0711')}`,
    })
  })
})
