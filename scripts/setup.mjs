#!/usr/bin/env node
// The two README commands. `npm test` and `npm run demo` both come here: first make sure the pinned
// pnpm, the dependencies and a build are in place (quietly when they already are), then run the job.
// Needs only Node >= 20.5 and npm.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const pnpmVersion = rootManifest.packageManager.replace(/^pnpm@/, '')
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  TURBO_NO_UPDATE_NOTIFIER: '1',
  DO_NOT_TRACK: '1',
}

function fail(message) {
  process.stderr.write(`setup: ${message}\n`)
  process.exit(1)
}

/** Runs a command quietly; prints its output only when it fails. */
function quiet(what, command, args) {
  const result = spawnSync(command, args, { cwd: root, env, encoding: 'utf8' })
  if (result.status !== 0) {
    process.stderr.write(result.stdout ?? '')
    process.stderr.write(result.stderr ?? '')
    fail(`${what} failed (${command} ${args.join(' ')}): exit ${result.status ?? result.signal}`)
  }
}

function loud(command, args) {
  return spawnSync(command, args, { cwd: root, env, stdio: 'inherit' }).status ?? 1
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number)
  if (major < 20 || (major === 20 && minor < 5)) fail(`Node >= 20.5 is required, this is ${process.version}`)
}

/** The pinned pnpm: the one on PATH when it is that version, else a private copy under .tools/. */
function ensurePnpm() {
  const onPath = spawnSync('pnpm', ['--version'], { encoding: 'utf8', env })
  if (onPath.status === 0 && onPath.stdout.trim() === pnpmVersion) return 'pnpm'
  const local = join(root, '.tools', 'pnpm', 'node_modules', '.bin', 'pnpm')
  const localVersion = existsSync(local)
    ? spawnSync(local, ['--version'], { encoding: 'utf8', env })
    : undefined
  if (localVersion?.status === 0 && localVersion.stdout.trim() === pnpmVersion) return usePrivate(local)
  process.stderr.write(`setup: installing pnpm ${pnpmVersion} into .tools/pnpm (once)\n`)
  quiet('installing pnpm', 'npm', [
    'install',
    '--prefix',
    join(root, '.tools', 'pnpm'),
    '--no-audit',
    '--no-fund',
    '--no-save',
    '--loglevel=error',
    `pnpm@${pnpmVersion}`,
  ])
  return usePrivate(local)
}

/** turbo runs package scripts with the `pnpm` it finds on PATH: put the private copy first. */
function usePrivate(local) {
  env.PATH = `${dirname(local)}${delimiter}${env.PATH ?? ''}`
  return local
}

/** A fingerprint of everything that decides what `pnpm install` does. */
function installFingerprint() {
  const hash = createHash('sha256')
  for (const file of ['pnpm-lock.yaml', 'package.json', 'pnpm-workspace.yaml']) {
    if (existsSync(join(root, file))) hash.update(readFileSync(join(root, file)))
  }
  for (const dir of packageDirs()) hash.update(readFileSync(join(dir, 'package.json')))
  return hash.digest('hex')
}

function packageDirs() {
  const base = join(root, 'packages')
  if (!existsSync(base)) return []
  return readdirSync(base)
    .map((name) => join(base, name))
    .filter((dir) => existsSync(join(dir, 'package.json')))
}

function ensureInstalled(pnpm) {
  const stamp = join(root, 'node_modules', '.setup-stamp')
  const fingerprint = installFingerprint()
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === fingerprint) return
  process.stderr.write('setup: installing dependencies\n')
  quiet('pnpm install', pnpm, [
    'install',
    '--frozen-lockfile',
    '--config.confirmModulesPurge=false',
    '--reporter=silent',
  ])
  writeFileSync(stamp, fingerprint)
}

function ensureBuilt(pnpm) {
  // The first build takes about a minute: said, so a first run is not silent meanwhile.
  if (!existsSync(join(root, 'packages', 'cli', 'dist', 'bin.js')))
    process.stderr.write('setup: building the packages (once; later runs rebuild only what changed)\n')
  quiet('build', pnpm, ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'])
}

/** Sums the vitest JSON reports of every package into one line. */
function summarise(expected) {
  let passed = 0
  let failed = 0
  let skipped = 0
  const missing = []
  const names = []
  for (const dir of expected) {
    const file = join(dir, '.vitest-report.json')
    if (!existsSync(file)) {
      missing.push(dir)
      continue
    }
    const report = JSON.parse(readFileSync(file, 'utf8'))
    passed += report.numPassedTests
    failed += report.numFailedTests
    skipped += report.numPendingTests + report.numTodoTests
    // A test file that failed to load has no test results but counts as a failure.
    for (const result of report.testResults ?? []) {
      const file = relative(root, result.name ?? dir)
      if (result.status === 'failed' && (result.assertionResults ?? []).length === 0) {
        failed += 1
        names.push(`${file}: did not load`)
      }
      for (const test of result.assertionResults ?? []) {
        if (test.status === 'failed') names.push(`${file} > ${test.fullName ?? test.title}`)
      }
    }
  }
  for (const dir of missing) process.stdout.write(`no test report from ${dir}: its test run crashed\n`)
  // Named again here, just above the tally, so the end of a long log says which ones failed.
  for (const name of names) process.stdout.write(`failed: ${name}\n`)
  failed += missing.length
  return { passed, failed, skipped }
}

function runTests(pnpm, args) {
  const withTests = packageDirs().filter(
    (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts?.test,
  )
  for (const dir of withTests) rmSync(join(dir, '.vitest-report.json'), { force: true })
  const status = loud(pnpm, ['exec', 'turbo', 'run', 'test', '--concurrency=2', '--continue', ...args])
  const { passed, failed, skipped } = summarise(withTests)
  const total = passed + failed + skipped
  process.stdout.write(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`)
  if (total === 0) {
    process.stderr.write('setup: no test ran\n')
    return 1
  }
  return failed > 0 || status !== 0 ? 1 : 0
}

/**
 * The checks beside the tests: every package's lint (`biome check .`: its sources, tests, bench,
 * scripts and README) and typecheck (`tsc --noEmit` over src and test), and the repository's own
 * scripts/ and docs linted, and every package's packaging (publint, attw: scripts/packaging.mjs).
 * One tally line, each check one count; a failed one named above it.
 */
function runChecks(pnpm) {
  const checks = [
    [
      'lint (every package)',
      pnpm,
      ['exec', 'turbo', 'run', 'lint', '--continue', '--output-logs=errors-only'],
    ],
    [
      'typecheck (every package, tests included)',
      pnpm,
      ['exec', 'turbo', 'run', 'typecheck', '--continue', '--output-logs=errors-only'],
    ],
    [
      'lint (scripts/, docs/ and the root files)',
      pnpm,
      [
        'exec',
        'biome',
        'check',
        'scripts',
        'docs',
        'biome.json',
        'package.json',
        'turbo.json',
        'typedoc.json',
      ],
    ],
    [
      'packaging (publint and attw, every package)',
      process.execPath,
      [join(root, 'scripts', 'packaging.mjs')],
    ],
  ]
  const failed = checks.filter(([, command, args]) => loud(command, args) !== 0).map(([what]) => what)
  for (const what of failed) process.stdout.write(`failed: ${what}\n`)
  process.stdout.write(`${checks.length - failed.length} passed, ${failed.length} failed\n`)
  return failed.length > 0 ? 1 : 0
}

function runDemo(args) {
  const cli = join(root, 'node_modules', '.bin', 'toolvisor')
  if (!existsSync(cli)) fail(`${cli} is missing after the build: run \`pnpm install\` and try again`)
  return loud(cli, ['demo', ...args])
}

checkNode()
const [job, ...args] = process.argv.slice(2)
const pnpm = ensurePnpm()
ensureInstalled(pnpm)
ensureBuilt(pnpm)
if (job === 'test') process.exit(runTests(pnpm, args))
else if (job === 'demo') process.exit(runDemo(args))
else if (job === 'checks') process.exit(runChecks(pnpm))
else if (job === 'setup') process.exit(0)
else fail(`unknown job "${job}": use test, demo, checks or setup`)
