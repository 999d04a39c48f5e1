import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { builtLauncher } from '../src/internal/launcher.js'
import { landlockMechanism } from '../src/mechanism.js'
import { policyFor, probeTool, removeTempDirs, tempDir } from './helpers.js'

const script = fileURLToPath(new URL('../scripts/build-native.mjs', import.meta.url))
const hasCc = spawnSync('cc', ['--version']).status === 0

afterAll(() => {
  removeTempDirs()
})

function build(outDir: string, cc: string | undefined) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' }
  if (cc !== undefined) env.CC = cc
  return spawnSync(process.execPath, [script, outDir], { encoding: 'utf8', env })
}

describe('scripts/build-native.mjs', () => {
  it('without a compiler: the build succeeds, UNAVAILABLE holds reason and fix, the mechanism says so', async () => {
    const out = tempDir()
    const result = build(out, '/nonexistent/cc')
    expect(result.status).toBe(0)
    const reason = 'no C compiler: "/nonexistent/cc" was not found'
    const fix = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/sandbox-landlock'
    expect(result.stderr).toBe(
      `warning: @toolvisor/sandbox-landlock: landlock-launcher was not built: ${reason}\n` +
        `  fix: ${fix}\n  @toolvisor/sandbox-landlock reports it unavailable until then\n`,
    )
    expect(readFileSync(join(out, 'UNAVAILABLE'), 'utf8')).toBe(`reason: ${reason}\nfix: ${fix}\n`)
    expect(existsSync(join(out, 'landlock-launcher'))).toBe(false)

    const mechanism = landlockMechanism({ launcher: join(out, 'landlock-launcher') })
    const tool = probeTool()
    const expected = { reason: `the Landlock launcher was not built: ${reason}`, fix }
    expect(await mechanism.qualify(policyFor(tool.dir, tool.file), undefined)).toEqual({
      ok: false,
      field: 'mechanism',
      ...expected,
    })
    expect(await mechanism.describe()).toMatchObject({ available: false, unavailable: expected })
  })

  it('with a compiler that fails: the build succeeds and UNAVAILABLE keeps what went wrong', () => {
    const out = tempDir()
    const result = build(out, 'false')
    expect(result.status).toBe(0)
    expect(readFileSync(join(out, 'UNAVAILABLE'), 'utf8')).toMatch(
      /^reason: "false" failed to compile native\/landlock-launcher\.c: exit status 1\nfix: use a working C compiler/,
    )
  })

  it.skipIf(!hasCc)(
    'with cc: builds a launcher that runs, and removes a stale UNAVAILABLE (needs cc)',
    () => {
      const out = tempDir()
      expect(build(out, 'false').status).toBe(0)
      expect(existsSync(join(out, 'UNAVAILABLE'))).toBe(true)
      const result = build(out, undefined)
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(
        /^@toolvisor\/sandbox-landlock: built .*landlock-launcher \(Landlock ABI \d+ here\)\n$/,
      )
      expect(existsSync(join(out, 'UNAVAILABLE'))).toBe(false)
      expect(spawnSync(join(out, 'landlock-launcher'), ['--abi'], { encoding: 'utf8' }).stdout).toMatch(
        /^\d+\n$/,
      )
    },
  )
})

describe('the built package', () => {
  it('finds its launcher from dist/ (new URL relative to the module)', () => {
    const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url))
    const code = `
      const { landlockMechanism } = await import(${JSON.stringify(entry)})
      const m = landlockMechanism()
      const d = await m.describe()
      const policy = { toolDir: '/usr/bin', executable: '/usr/bin/true', read: [], write: [], net: 'host', tmp: 'shared', declared: [], pins: {} }
      const w = m.wrap({ file: '/usr/bin/true', args: [], env: {}, cwd: '/', extraFds: [] }, policy, undefined)
      process.stdout.write(JSON.stringify({ available: d.available, file: w.file }))
    `
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({ available: true, file: builtLauncher })
  })
})
