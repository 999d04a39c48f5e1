#!/usr/bin/env node
// Puts the `toolvisor` command on PATH from a clone, or takes it off again:
//
//   npm run install-cli [-- --prefix DIR]      set up and build, pack every package, npm install -g them
//   npm run uninstall-cli [-- --prefix DIR]    npm uninstall -g every package install-cli put there
//   node scripts/install-cli.mjs --pack DIR    only pack the tarballs into DIR (what a publish uploads)
//
// The packages are packed with `pnpm pack` (what `pnpm publish` uploads: `workspace:^` ranges
// rewritten to the versions) and installed together with `npm install -g`, so npm resolves each
// @toolvisor dependency to its sibling tarball and the rest from the registry. Their postinstall
// builds the two small C helpers (toolvisor-exec, the Landlock launcher) with `cc` on this machine.
// `--prefix DIR` installs under DIR (the command is DIR/bin/toolvisor) instead of npm's global
// prefix; `--no-setup` skips the set-up and build (the tree is already built, as in the tests).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = fileURLToPath(new URL('..', import.meta.url))
const usage = 'usage: node scripts/install-cli.mjs [--prefix DIR] [--uninstall] [--pack DIR] [--no-setup]'

function fail(message) {
  process.stderr.write(`install-cli: ${message}\n`)
  process.exit(1)
}

/** Runs a command; its output is shown only when it fails (or always, with `loud`). */
function run(command, args, { loud = false, cwd = root } = {}) {
  // stdin is never a terminal to wait on: npm must not prompt.
  const stdio = loud ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe']
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', stdio })
  if (result.error) fail(`${command} could not start: ${result.error.message}`)
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`)
    fail(`${command} ${args.join(' ')} failed: exit ${result.status ?? result.signal}`)
  }
  return result.stdout ?? ''
}

/** The workspace packages that are published (not private), by name. */
function publishedPackages() {
  const base = join(root, 'packages')
  return readdirSync(base)
    .map((dir) => join(base, dir, 'package.json'))
    .filter((file) => existsSync(file))
    .map((file) => JSON.parse(readFileSync(file, 'utf8')))
    .filter((manifest) => manifest.private !== true)
    .map((manifest) => manifest.name)
}

/** The pinned pnpm the set-up uses: on PATH, else the private copy in .tools/. */
function pnpm() {
  if (spawnSync('pnpm', ['--version']).status === 0) return 'pnpm'
  const local = join(root, '.tools', 'pnpm', 'node_modules', '.bin', 'pnpm')
  if (existsSync(local)) return local
  return fail('pnpm is missing: run `npm run demo` or `npm test` once (they install it), or drop --no-setup')
}

/** Packs every published package into `dir`; returns the tarballs. */
function pack(dir) {
  mkdirSync(dir, { recursive: true })
  run(pnpm(), ['-r', '--filter', './packages/*', 'pack', '--pack-destination', dir])
  const tarballs = readdirSync(dir)
    .filter((name) => name.endsWith('.tgz'))
    .map((name) => join(dir, name))
  const expected = publishedPackages().length
  if (tarballs.length !== expected)
    fail(`packed ${tarballs.length} tarballs into ${dir}, expected ${expected}`)
  return tarballs
}

/** Where npm puts the command for `prefix` (npm's global prefix when none is given). */
function binDir(prefix) {
  const base = prefix ?? run('npm', ['prefix', '-g']).trim()
  return process.platform === 'win32' ? base : join(base, 'bin')
}

function install(prefix) {
  const scratch = mkdtempSync(join(tmpdir(), 'toolvisor-pack-'))
  try {
    const tarballs = pack(scratch)
    const where = prefix ? ['--prefix', prefix] : []
    process.stderr.write(
      `install-cli: npm install -g ${tarballs.length} packages${prefix ? ` into ${prefix}` : ''}\n`,
    )
    run('npm', ['install', '-g', ...where, '--no-audit', '--no-fund', '--loglevel=error', ...tarballs])
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  const bin = binDir(prefix)
  const onPath = (process.env.PATH ?? '').split(delimiter).includes(bin)
  process.stdout.write(`toolvisor is installed: ${join(bin, 'toolvisor')}\n`)
  if (!onPath) process.stdout.write(`${bin} is not on PATH: add it (export PATH="${bin}:$PATH")\n`)
  process.stdout.write(`remove it with: npm run uninstall-cli${prefix ? ` -- --prefix ${prefix}` : ''}\n`)
}

function uninstall(prefix) {
  const where = prefix ? ['--prefix', prefix] : []
  run('npm', ['uninstall', '-g', ...where, '--loglevel=error', ...publishedPackages()])
  process.stdout.write(`toolvisor is removed from ${binDir(prefix)}\n`)
}

let options
try {
  options = parseArgs({
    options: {
      prefix: { type: 'string' },
      uninstall: { type: 'boolean' },
      pack: { type: 'string' },
      'no-setup': { type: 'boolean' },
    },
    strict: true,
  }).values
} catch (error) {
  fail(`${error.message}\n${usage}`)
}
const prefix = options.prefix === undefined ? undefined : resolve(options.prefix)
if (options.uninstall) uninstall(prefix)
else {
  if (!options['no-setup'])
    run(process.execPath, [join(root, 'scripts', 'setup.mjs'), 'setup'], { loud: true })
  if (options.pack !== undefined) {
    for (const tarball of pack(resolve(options.pack))) process.stdout.write(`${tarball}\n`)
  } else install(prefix)
}
