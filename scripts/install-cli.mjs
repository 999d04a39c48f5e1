#!/usr/bin/env node
// Puts the `toolvisor` command on PATH from a clone, or takes it off again:
//
//   npm run install-cli [-- --prefix DIR]      set up and build, pack, install into DIR/lib/toolvisor, link DIR/bin/toolvisor
//   npm run uninstall-cli [-- --prefix DIR]    remove that link and that folder
//   node scripts/install-cli.mjs --into DIR    install every package into the npm project DIR (the library route)
//   node scripts/install-cli.mjs --pack DIR    only pack the tarballs into DIR (what a publish uploads)
//
// The packages are packed with `pnpm pack` (what `pnpm publish` uploads: `workspace:^` ranges
// rewritten to the versions) and installed with plain npm into a project whose `overrides` point
// every @toolvisor package at its tarball, so npm never asks the registry for a package that is
// not published (it would only answer 404, or worse). Their postinstall builds the two small C
// helpers (toolvisor-exec, the Landlock launcher) with `cc` on this machine. DIR defaults to npm's
// global prefix (where `npm install -g` puts commands); `--no-setup` skips the set-up and build
// (the tree is already built, as in the tests).
import { spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { delimiter, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = fileURLToPath(new URL('..', import.meta.url))
const usage =
  'usage: node scripts/install-cli.mjs [--prefix DIR] [--uninstall] [--into DIR] [--pack DIR] [--no-setup]'

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
  const expected = Object.keys(tarballNames()).length
  if (tarballs.length !== expected)
    fail(`packed ${tarballs.length} tarballs into ${dir}, expected ${expected}`)
  return tarballs
}

/** The tarball `pnpm pack` makes of each published package, by package name. */
function tarballNames() {
  const base = join(root, 'packages')
  return Object.fromEntries(
    readdirSync(base)
      .map((dir) => join(base, dir, 'package.json'))
      .filter((file) => existsSync(file))
      .map((file) => JSON.parse(readFileSync(file, 'utf8')))
      .filter((manifest) => manifest.private !== true)
      .map(({ name, version }) => [name, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`]),
  )
}

/**
 * Installs `wanted` (package names) into the npm project `dir` from freshly packed tarballs kept in
 * `dir/toolvisor-packs`: `overrides` send every @toolvisor dependency to its tarball.
 */
function intoProject(dir, wanted) {
  const packs = join(dir, 'toolvisor-packs')
  rmSync(packs, { recursive: true, force: true })
  pack(packs)
  const file = join(dir, 'package.json')
  const manifest = existsSync(file)
    ? JSON.parse(readFileSync(file, 'utf8'))
    : {
        name: 'toolvisor-install',
        private: true,
        // Every package is ESM only: a project of its own files (the library guide's) is ESM too.
        type: 'module',
        description: 'made by toolvisor scripts/install-cli.mjs',
      }
  const spec = (tarball) => `file:toolvisor-packs/${tarball}`
  const tarballs = tarballNames()
  manifest.overrides = { ...manifest.overrides }
  manifest.dependencies = { ...manifest.dependencies }
  for (const [name, tarball] of Object.entries(tarballs)) manifest.overrides[name] = spec(tarball)
  for (const name of wanted) manifest.dependencies[name] = spec(tarballs[name])
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`)
  process.stderr.write(`install-cli: npm install in ${dir}\n`)
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir })
}

/** Where the command and its packages go: DIR/bin/toolvisor and DIR/lib/toolvisor. */
function placesUnder(prefix) {
  const base = prefix ?? run('npm', ['prefix', '-g']).trim()
  return { bin: join(base, 'bin'), lib: join(base, 'lib', 'toolvisor') }
}

/** Whether `link` is the command this script made (a symlink into `lib`). */
function ours(link, lib) {
  try {
    return (
      lstatSync(link).isSymbolicLink() && resolve(dirname(link), readlinkSync(link)).startsWith(`${lib}/`)
    )
  } catch {
    return false
  }
}

function install(prefix) {
  const { bin, lib } = placesUnder(prefix)
  const command = join(bin, 'toolvisor')
  if (existsSync(command) && !ours(command, lib))
    fail(`${command} exists and is not one this script installed: remove it first`)
  mkdirSync(lib, { recursive: true })
  intoProject(lib, ['@toolvisor/cli'])
  mkdirSync(bin, { recursive: true })
  rmSync(command, { force: true })
  symlinkSync(relative(bin, join(lib, 'node_modules', '@toolvisor', 'cli', 'dist', 'bin.js')), command)
  const onPath = (process.env.PATH ?? '').split(delimiter).includes(bin)
  process.stdout.write(`toolvisor is installed: ${command}\n`)
  if (!onPath) process.stdout.write(`${bin} is not on PATH: add it (export PATH="${bin}:$PATH")\n`)
  process.stdout.write(`remove it with: npm run uninstall-cli${prefix ? ` -- --prefix ${prefix}` : ''}\n`)
}

function uninstall(prefix) {
  const { bin, lib } = placesUnder(prefix)
  const command = join(bin, 'toolvisor')
  if (ours(command, lib)) rmSync(command)
  else if (existsSync(command)) fail(`${command} is not one this script installed: left as it is`)
  rmSync(lib, { recursive: true, force: true })
  process.stdout.write(`toolvisor is removed from ${bin}\n`)
}

let options
try {
  options = parseArgs({
    options: {
      prefix: { type: 'string' },
      uninstall: { type: 'boolean' },
      pack: { type: 'string' },
      into: { type: 'string' },
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
  } else if (options.into !== undefined) {
    intoProject(resolve(options.into), Object.keys(tarballNames()))
  } else install(prefix)
}
