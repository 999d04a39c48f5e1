import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import type { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { type Launch, RuntimeError } from '@toolvisor/launchers'
import { nativeProblem, type SpawnerFacts } from '@toolvisor/process-runtime'
import { KeptChild } from './kept-child.js'

/** `toolvisor-keeper` as this package's build compiled it. */
export const builtKeeper = fileURLToPath(new URL('../dist/native/toolvisor-keeper', import.meta.url))

/** The keeper binary to use, or why none (`UNAVAILABLE` of the build, or a missing file). */
export function keeperStatus(path: string = builtKeeper): SpawnerFacts {
  const missing = nativeProblem(path)
  return missing === undefined
    ? { available: true, path }
    : { available: false, reason: `toolvisor-keeper is missing: ${missing.reason}` }
}

/** Options of a {@link Keepers}. */
export interface KeepersOptions {
  /** Where the keepers' directories go: `<stateDir>/keep` (made 0700 if missing; must be toolvisor's alone). */
  readonly root: string
  /** The keeper binary (default: the one built here). */
  readonly binary?: string
  /** Bytes each stream's file may hold (default unbounded; past it bytes are dropped and counted). */
  readonly capBytes?: number
  /** How long a keeper with no daemon lives before it kills its process and goes (default 24 h). */
  readonly reapAfterMs?: number
}

/** What a launch needs kept: the wrapped launch, and how to reach its keeper once it runs. */
export interface KeptLaunch {
  readonly launch: Launch
  readonly dir: string
  /** Waits for the keeper's `ready` on its stdout (or its error on stderr), then connects. */
  attach(stdout: Readable | null, stderr: Readable | null): Promise<KeptChild>
}

/**
 * The keepers of one state directory (decision 0113): each kept launch gets a directory
 * `<root>/<key>/` (0700) and is wrapped in `toolvisor-keeper`, outermost (`wrap`), so that the
 * process's parent is its keeper, not the daemon; a later daemon finds the keepers still there
 * (`list`) and re-adopts them (`adopt`). Every keeper of the directory answers only its own uid
 * and the directory's secret (`<root>/secret`, 0600, made once).
 */
export class Keepers {
  readonly root: string
  readonly binary: string
  readonly #options: KeepersOptions
  readonly #secret: string

  constructor(options: KeepersOptions) {
    this.#options = options
    this.root = options.root
    this.binary = options.binary ?? builtKeeper
    const status = keeperStatus(this.binary)
    if (!status.available)
      throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', `cannot keep processes: ${status.reason}`)
    this.#secret = secretOf(this.root)
  }

  /** Wraps `launch` in a keeper with a new directory. */
  wrap(launch: Launch): KeptLaunch {
    if (launch.terminal !== undefined)
      throw new RuntimeError(
        'RUNTIME_ERR_SPAWN_FAILED',
        `cannot keep ${launch.file}: a launch on a terminal is not kept`,
      )
    const key = randomBytes(8).toString('hex')
    const dir = join(this.root, key)
    mkdirSync(dir, { mode: 0o700 })
    const { capBytes, reapAfterMs } = this.#options
    const args = [
      '--dir',
      dir,
      '--secret',
      join(this.root, 'secret'),
      '--fds',
      String(launch.extraFds.length),
    ]
    if (capBytes !== undefined) args.push('--cap', String(capBytes))
    if (reapAfterMs !== undefined)
      args.push('--reap-after', String(Math.max(1, Math.ceil(reapAfterMs / 1000))))
    // Its own cgroups (the v2 leaf it is born in, the v1 leaves it joins): what its reap kills.
    const leaves = [
      ...(launch.cgroupDir ? [launch.cgroupDir] : []),
      ...(launch.cgroups ?? []).map((procs) => dirname(procs)),
    ]
    for (const leaf of leaves.slice(0, 4)) args.push('--cgroup', leaf)
    const wrapped: Launch = {
      ...launch,
      file: this.binary,
      args: [...args, '--', launch.file, ...launch.args],
    }
    return {
      launch: wrapped,
      dir,
      attach: (stdout, stderr) => this.#attach(dir, stdout, stderr),
    }
  }

  /** The keepers' directories still there: each a kept process a daemon may re-adopt. */
  list(): string[] {
    let names: string[]
    try {
      names = readdirSync(this.root)
    } catch {
      return []
    }
    return names
      .filter((name) => /^[0-9a-f]{16}$/.test(name))
      .map((name) => join(this.root, name))
      .filter((dir) => existsSync(join(dir, 'sock')))
  }

  /** Connects to the keeper in `dir` (see `KeptChild.connect`). */
  adopt(dir: string): Promise<KeptChild> {
    return KeptChild.connect(dir, this.#secret)
  }

  async #attach(dir: string, stdout: Readable | null, stderr: Readable | null): Promise<KeptChild> {
    const said = await firstLine(stdout, stderr)
    if (!said.startsWith('ready '))
      throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', `cannot keep the launch: ${said}`)
    return KeptChild.connect(dir, this.#secret)
  }
}

/** The keepers' secret (`<root>/secret`, 0600), made with the directory when missing. */
function secretOf(root: string): string {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const stat = lstatSync(root)
  if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0)
    throw new RuntimeError(
      'RUNTIME_ERR_STATE_DIR',
      `${root} must be a directory of this user's alone (mode 0700): the keepers' secret lives there`,
    )
  const path = join(root, 'secret')
  if (!existsSync(path))
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(path, 0o600)
  return readFileSync(path, 'utf8').trim()
}

/** The keeper's first line on its stdout (`ready PID`), or what it said on stderr when it ended instead. */
function firstLine(stdout: Readable | null, stderr: Readable | null): Promise<string> {
  return new Promise((resolve) => {
    let out = ''
    let err = ''
    stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString()
    })
    stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const newline = out.indexOf('\n')
      if (newline >= 0) resolve(out.slice(0, newline))
    })
    const said = () => resolve(err.trim() || 'the keeper ended without a word')
    // What it said on stderr is whole once stderr closed too.
    stdout?.once('close', () => (stderr && !stderr.readableEnded ? stderr.once('close', said) : said()))
    if (!stdout) resolve('the keeper has no stdout')
  })
}
