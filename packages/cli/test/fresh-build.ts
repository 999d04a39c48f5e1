// A second build of this checkout, as an operator's upgrade installs one: the checkout's files (what
// git lists, tracked and untracked, never what it ignores) copied into a folder of their own,
// installed from pnpm's store without the network, and built there. Its `bin.js` shares nothing
// with the tests' build: not a module, not a native helper, not a path.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs'
import { delimiter, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from './helpers.js'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

/** Why there can be no second build here, or undefined when there can. */
export function noFreshBuild(): string | undefined {
  const git = spawnSync('git', ['-C', root, 'rev-parse', '--is-inside-work-tree'], { encoding: 'utf8' })
  if (git.status !== 0) return `a second build copies the files git lists, and ${root} is not a git work tree`
  if (pnpm() === undefined) return 'a second build needs pnpm, found neither on PATH nor in .tools/pnpm'
  return undefined
}

function pnpm(): string | undefined {
  const onPath = spawnSync('pnpm', ['--version'], { encoding: 'utf8' })
  if (onPath.status === 0) return 'pnpm'
  const local = join(root, '.tools', 'pnpm', 'node_modules', '.bin', 'pnpm')
  return existsSync(local) ? local : undefined
}

/** Builds the checkout again in a temporary folder (removed after the test); returns its `bin.js`. */
export function freshBuild(): string {
  const into = join(tempDir('tv-fresh-build-'), 'toolvisor')
  const listed = spawnSync('git', ['-C', root, 'ls-files', '-co', '--exclude-standard', '-z'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`)
  for (const path of listed.stdout.split('\0').filter(Boolean)) copy(join(root, path), join(into, path))
  const command = pnpm()!
  const env = {
    ...process.env,
    // turbo runs each package's script with the pnpm it finds on PATH.
    PATH: command === 'pnpm' ? process.env.PATH : `${dirname(command)}${delimiter}${process.env.PATH ?? ''}`,
    TURBO_TELEMETRY_DISABLED: '1',
    TURBO_NO_UPDATE_NOTIFIER: '1',
    DO_NOT_TRACK: '1',
  }
  const steps = [
    ['install', '--offline', '--frozen-lockfile', '--reporter=silent'],
    // One task at a time: the other test files of the run go on beside it.
    [
      'exec',
      'turbo',
      'run',
      'build',
      '--filter',
      '@toolvisor/cli...',
      '--concurrency=1',
      '--output-logs=errors-only',
    ],
  ]
  for (const args of steps) {
    const step = spawnSync(command, args, { cwd: into, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    if (step.status !== 0)
      throw new Error(
        `the second build's pnpm ${args.join(' ')} failed (${step.status ?? step.signal}):\n${step.stdout}${step.stderr}`,
      )
  }
  const bin = join(into, 'packages', 'cli', 'dist', 'bin.js')
  if (!existsSync(bin)) throw new Error(`the second build has no ${bin}`)
  return bin
}

/** Copies one listed path (a file or a symbolic link; a tracked file deleted in the work tree is skipped). */
function copy(from: string, to: string): void {
  const stat = lstatSync(from, { throwIfNoEntry: false })
  if (stat === undefined) return
  mkdirSync(dirname(to), { recursive: true })
  if (stat.isSymbolicLink()) symlinkSync(readlinkSync(from), to)
  else if (stat.isFile()) copyFileSync(from, to)
}
