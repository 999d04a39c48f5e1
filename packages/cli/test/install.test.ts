/**
 * The command a client can start (issue 18.1): the README's way to put `toolvisor` on PATH from a
 * clone (`npm run install-cli`, here into a temporary prefix) and to remove it again, and the
 * tarballs a publish would upload, installed with npm into an empty folder, running the CLI and
 * the library guide's example exactly as the guide prints it. Uses npm and the registry (for the
 * third-party dependencies), as a user's machine would; the tree is already built by the set-up.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examples, tempDir } from './helpers.js'

const root = join(examples, '..', '..')
const script = join(root, 'scripts', 'install-cli.mjs')
const version = JSON.parse(readFileSync(join(root, 'packages', 'cli', 'package.json'), 'utf8')).version
/** One npm install may take this long on a loaded machine (it takes seconds on an idle one). */
const STEP_MS = 420_000
/** npm uses the metadata it has cached before asking the registry again: fewer round trips. */
const npmEnv = { ...process.env, npm_config_prefer_offline: 'true' }

/** Runs a command to its end; fails the test with its output when it exits non-zero. */
function sh(command: string, args: string[], env: NodeJS.ProcessEnv = npmEnv, cwd = root): string {
  const began = Date.now()
  const result = spawnSync(command, args, {
    cwd,
    env,
    encoding: 'utf8',
    timeout: STEP_MS,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const how = `exit ${result.status ?? result.signal} after ${Date.now() - began} ms`
  expect(result.status, `${command} ${args.join(' ')}: ${how}\n${result.stdout}${result.stderr}`).toBe(0)
  return result.stdout
}

/** A PATH where `toolvisor` can only come from `bin`: the prefix, node, and the system. */
function pathWith(bin: string): string {
  return [bin, dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':')
}

/** The code block the library guide marks as tested under `name` (`<!-- tested: NAME -->`). */
function guideBlock(name: string): string {
  const guide = readFileSync(join(root, 'docs', 'guides', 'using-the-library.md'), 'utf8')
  const marked = guide.split(`<!-- tested: ${name} -->`)[1]
  const block = marked?.match(/```\w+\n([\s\S]*?)```/)?.[1]
  expect(block, `docs/guides/using-the-library.md has no tested ${name}`).toBeDefined()
  return block!
}

/** What the guide's first program prints (its JavaScript and its TypeScript form alike). */
function printsTheDemo(out: string): void {
  expect(out).toContain(
    'tools: counter, echo_args, file_stats, git_lite__log, git_lite__status, help, log_lines, log_watcher, log_watcher__send, processes, word_count\n',
  )
  expect(out).toContain('5 words, 1 line, 19 characters\n')
  expect(out).toMatch(/^event 3: \{"n":3,"at":"[^"]+"\}$/m)
  expect(out).toMatch(/^result: \[\{"n":1,/m)
}

describe('npm run install-cli', () => {
  it(
    'puts toolvisor on PATH under a prefix, where --version and describe run, and takes it off again',
    () => {
      const prefix = tempDir('tv-prefix-')
      const said = sh(process.execPath, [script, '--prefix', prefix, '--no-setup'])
      const bin = join(prefix, 'bin')
      expect(said).toContain(`toolvisor is installed: ${join(bin, 'toolvisor')}\n`)
      const env = { ...npmEnv, PATH: pathWith(bin) }
      expect(sh('sh', ['-c', 'command -v toolvisor'], env)).toBe(`${join(bin, 'toolvisor')}\n`)
      expect(sh('toolvisor', ['--version'], env)).toBe(`${version}\n`)
      const described = sh('toolvisor', ['describe', join(examples, 'counter')], env, prefix)
      expect(described).toContain(`${join(examples, 'counter')} (v2 stream, jsonl events, check)`)
      // The C helper is built on install by the package's postinstall, not shipped prebuilt.
      const lib = join(prefix, 'lib', 'toolvisor')
      const native = join(lib, 'node_modules', '@toolvisor', 'process-runtime', 'dist', 'native')
      expect(readdirSync(native)).toContain('toolvisor-exec')

      sh(process.execPath, [script, '--uninstall', '--prefix', prefix])
      expect(existsSync(join(bin, 'toolvisor'))).toBe(false)
      expect(existsSync(lib)).toBe(false)
      const gone = spawnSync('sh', ['-c', 'command -v toolvisor'], { env, encoding: 'utf8' })
      expect([gone.status, gone.stdout]).toEqual([127, ''])
    },
    2 * STEP_MS + 60_000,
  )
})

describe('the tarballs a publish uploads', () => {
  it(
    'have no workspace ranges, install with npm into an empty project (--into), and run the CLI and the library example',
    () => {
      const packs = tempDir('tv-packs-')
      sh(process.execPath, [script, '--pack', packs, '--no-setup'])
      const tarballs = readdirSync(packs).filter((name) => name.endsWith('.tgz'))
      expect(tarballs).toContain(`toolvisor-cli-${version}.tgz`)
      for (const tarball of tarballs) {
        const manifest = sh('tar', ['-xzOf', join(packs, tarball), 'package/package.json'])
        expect(manifest, tarball).not.toContain('workspace:')
      }
      // An empty folder: --into makes its package.json, ESM as every package is.
      const app = tempDir('tv-app-')
      sh(process.execPath, [script, '--into', app, '--no-setup'])
      const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
      expect(manifest.type).toBe('module')
      expect(manifest.dependencies['@toolvisor/toolbox']).toBe(
        `file:toolvisor-packs/toolvisor-toolbox-${version}.tgz`,
      )
      expect(sh(join(app, 'node_modules', '.bin', 'toolvisor'), ['--version'], npmEnv, app)).toBe(
        `${version}\n`,
      )

      writeFileSync(join(app, 'library-demo.mjs'), guideBlock('library-demo.mjs'))
      const out = sh(process.execPath, ['library-demo.mjs', examples], npmEnv, app)
      printsTheDemo(out)

      // The TypeScript form: type-checked against the installed packages' types (strict), then run.
      // As the guide says: Node's types beside the packages' own (TypeScript is the workspace's 5.9).
      sh(
        'npm',
        ['install', '--no-audit', '--no-fund', '--loglevel=error', '-D', '@types/node@^20.19.0'],
        npmEnv,
        app,
      )
      writeFileSync(join(app, 'tsconfig.json'), guideBlock('tsconfig.json'))
      writeFileSync(join(app, 'library-demo.ts'), guideBlock('library-demo.ts'))
      sh(
        process.execPath,
        [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
        npmEnv,
        app,
      )
      const typed = sh(process.execPath, [join('dist', 'library-demo.js'), examples], npmEnv, app)
      printsTheDemo(typed)
    },
    2 * STEP_MS + 60_000,
  )
})
