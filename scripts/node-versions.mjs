// The Node versions CI runs on, and where their binaries come from: the Node running this script
// when it is of that major, else the npm registry's `node-linux-<arch>@<major>` package (it ships
// the binary), fetched once into `.tools/node-<major>/` (gitignored). Needs only Node and npm.
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Every Node major CI runs the whole suite on: the supported ones (`engines`) and the LTS lines. */
export const CI_MAJORS = [20, 22, 24]

/** The major of the Node running this script. */
export const ownMajor = Number(process.versions.node.split('.')[0])

function fail(message) {
  process.stderr.write(`node-versions: ${message}\n`)
  process.exit(1)
}

/** The binary of Node `major`: this one, or the registry's package in `.tools/node-<major>/`. */
export function nodeFor(major) {
  if (major === ownMajor) return process.execPath
  const dir = join(root, '.tools', `node-${major}`)
  const binary = join(dir, 'package', 'bin', 'node')
  if (!existsSync(binary)) fetchNode(major, dir)
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' })
  if (version.status !== 0 || !version.stdout.startsWith(`v${major}.`)) {
    fail(
      `${binary} does not run as Node ${major} (${version.stdout.trim() || version.stderr.trim() || version.error?.message}); delete ${dir} and try again`,
    )
  }
  return binary
}

function fetchNode(major, dir) {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch]
  if (process.platform !== 'linux' || arch === undefined) {
    fail(
      `Node ${major} is not installed, and the registry ships it for linux x64/arm64 only (this is ${process.platform} ${process.arch}); install Node ${major}`,
    )
  }
  const name = `node-linux-${arch}@${major}`
  process.stderr.write(`node-versions: fetching Node ${major} (${name}) into .tools/node-${major} (once)\n`)
  mkdirSync(dir, { recursive: true })
  const pack = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir, name], { encoding: 'utf8' })
  const tarball = readdirSync(dir).find((file) => file.endsWith('.tgz'))
  if (pack.status !== 0 || tarball === undefined) fail(`npm pack ${name} failed: ${pack.stderr.trim()}`)
  const untar = spawnSync('tar', ['xzf', join(dir, tarball), '-C', dir], { encoding: 'utf8' })
  if (untar.status !== 0) fail(`unpacking ${tarball} failed: ${untar.stderr.trim()}`)
}

/** True when every user may run `binary`: it and every folder above it are open to others. */
function reachableByAll(binary) {
  if ((statSync(binary).mode & 0o005) !== 0o005) return false
  for (let dir = dirname(binary); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false
    if (dirname(dir) === dir) return true
  }
}

/**
 * `binary` where every user may run it: itself when it is, else a link (a copy across file
 * systems) in a fresh folder of the temporary directory. Tests run tools as other users (run_as,
 * the sandbox user), with the Node that runs them, so a Node under a private folder (a clone in a
 * 0700 directory) must be reachable elsewhere, and one whose path holds a space, for a `#!` line.
 * `remove()` deletes what was made.
 */
export function sharedBinary(binary) {
  // A path with a space cannot be a script's `#!` line (the kernel splits it there): the tests'
  // scripts name the Node that runs them so, and a checkout under "/tmp/final ci" would break them.
  if (reachableByAll(binary) && !/\s/.test(binary)) return { binary, remove: () => {} }
  const dir = mkdtempSync(join(tmpdir(), 'toolvisor-node-'))
  chmodSync(dir, 0o755)
  mkdirSync(join(dir, 'bin'), { mode: 0o755 })
  const shared = join(dir, 'bin', 'node')
  try {
    linkSync(binary, shared)
  } catch {
    copyFileSync(binary, shared)
  }
  chmodSync(shared, 0o755)
  return { binary: shared, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** npm's own entry script, so npm can run on another Node than the one on PATH. */
export function npmCli() {
  const found = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim()
  if (found === '') fail('npm is not on PATH')
  return realpathSync(found)
}

// `node scripts/node-versions.mjs 22`: prints the binary of Node 22 (fetched into .tools/ when it
// is not this one), for what needs a newer Node than the one installed (the Inspector, the suite).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const major = Number(process.argv[2])
  if (!Number.isInteger(major) || major < 1) fail('usage: node scripts/node-versions.mjs MAJOR (e.g. 22)')
  process.stdout.write(`${nodeFor(major)}\n`)
}
