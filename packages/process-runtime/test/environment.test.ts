/**
 * The environment a tool starts with: the operator's inherit policy over toolvisor's own
 * environment (an agent's API keys live there), then the tool's identity, envdir, declared
 * `environment`, `env` arguments and the context variables.
 */
import { chmodSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { effectivePolicy, inherited } from '../src/internal/environment.js'
import { fixture, makeRuntime, output, processSpec, runtimeSpec, tempDir } from './helpers.js'

const source = {
  PATH: '/usr/bin:/bin',
  HOME: '/root',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  OPENAI_API_KEY: 'sk-1',
  GITHUB_TOKEN: 'ghp-2',
  DB_PASSWORD: 'p',
  my_secret_sauce: 's',
  EDITOR: 'vi',
  AWS_REGION: 'eu-west-1',
}

describe('inherited', () => {
  it('all: everything but the default excludes (*KEY*, *SECRET*, *TOKEN*, *PASSWORD*, any case)', () => {
    expect(inherited({ inherit: 'all' }, source)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      EDITOR: 'vi',
      AWS_REGION: 'eu-west-1',
    })
  })

  it('core: PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR, SHELL only', () => {
    expect(inherited({ inherit: 'core' }, source)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
    })
  })

  it('none, exclude, includeOnly, set, ignoreDefaultExcludes', () => {
    expect(inherited({ inherit: 'none', set: { LANG: 'C' } }, source)).toEqual({ LANG: 'C' })
    expect(inherited({ inherit: 'all', exclude: ['AWS_*', 'EDITOR'] }, source)).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/root',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
    })
    expect(inherited({ inherit: 'all', includeOnly: ['PATH', 'AWS_*'], set: { X: '1' } }, source)).toEqual({
      PATH: '/usr/bin:/bin',
      AWS_REGION: 'eu-west-1',
      X: '1',
    })
    expect(
      inherited({ inherit: 'all', ignoreDefaultExcludes: true, includeOnly: ['*_KEY'] }, source),
    ).toEqual({
      OPENAI_API_KEY: 'sk-1',
    })
  })

  it('effectivePolicy: core for sandboxed tools, all for the others; the toolbox overrides field by field', () => {
    expect(effectivePolicy(undefined, undefined, true)).toEqual({ inherit: 'core' })
    expect(effectivePolicy(undefined, undefined, false)).toEqual({ inherit: 'all' })
    expect(effectivePolicy({ inherit: 'none', exclude: ['A'] }, { exclude: ['B'] }, false)).toEqual({
      inherit: 'none',
      exclude: ['B'],
    })
    expect(effectivePolicy({ exclude: ['A'] }, { inherit: undefined }, true)).toEqual({
      inherit: 'core',
      exclude: ['A'],
    })
  })
})

describe('a started tool', () => {
  it("never sees a runtime variable the policy excludes, and the toolbox's policy wins", async () => {
    const dir = tempDir('tv-env-')
    const path = join(dir, 'report.mjs')
    copyFileSync(fixture('report.mjs'), path)
    chmodSync(path, 0o755)
    process.env.TV_TEST_API_KEY = 'must-not-leak'
    process.env.TV_TEST_VISIBLE = 'visible'
    try {
      const runtime = makeRuntime()
      const report = async (environment?: {
        inherit?: 'all' | 'core' | 'none'
        set?: Record<string, string>
      }) => {
        const prepared = await runtime.prepare({
          path,
          dir,
          slug: 'report',
          process: processSpec({ output: output('chunks') }),
          runtime: runtimeSpec(),
          ...(environment ? { environment } : {}),
        })
        const proc = runtime.start({
          tool: prepared,
          argv: [],
          env: { REPORT_ENV: 'TV_TEST_API_KEY,TV_TEST_VISIBLE,SET_BY_TOOLBOX' },
        })
        await proc.exit
        return JSON.parse(proc.output.stdout().head.toString()).env
      }
      expect(await report()).toEqual({
        TV_TEST_API_KEY: null,
        TV_TEST_VISIBLE: 'visible',
        SET_BY_TOOLBOX: null,
      })
      expect(
        await report({
          inherit: 'none',
          set: { SET_BY_TOOLBOX: 'yes', PATH: '/usr/local/bin:/usr/bin:/bin' },
        }),
      ).toEqual({
        TV_TEST_API_KEY: null,
        TV_TEST_VISIBLE: null,
        SET_BY_TOOLBOX: 'yes',
      })
    } finally {
      delete process.env.TV_TEST_API_KEY
      delete process.env.TV_TEST_VISIBLE
    }
  })
})
