import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs'
import { dirname, join, parse, resolve } from 'node:path'
import { RuntimeError } from '@toolvisor/launchers'
import { HeldDirectory } from './held-dir.js'

/**
 * The state directory is toolvisor's alone (decision 0092, F8 of the 2026-12-01 review): whoever
 * may rename in it, or in a directory above it, can swap a run directory for a link and have
 * toolvisor (root, often) write a tool's output through it. At start, each directory above must be
 * root's or toolvisor's own user's, and writable by group or others only with the sticky bit (in
 * /tmp nobody but its owner may rename an entry); the state directory and its `runs/` must be
 * toolvisor's own user's and writable by nobody else. Missing levels are made, mode 0700.
 * Returns the state directory's absolute path. Throws `RUNTIME_ERR_STATE_DIR` naming the path,
 * what was found and the fix.
 */
export function trustStateDir(stateDir: string): string {
  const euid = process.geteuid?.()
  const path = resolve(stateDir)
  if (euid === undefined) return path // no POSIX owners to check (not a platform toolvisor runs tools on)
  const check = new StateDirCheck(path, euid)
  check.above(path)
  check.own(path, true)
  check.own(join(path, 'runs'), false)
  return path
}

/** The checks of one state directory, each failure a RuntimeError naming it. */
class StateDirCheck {
  readonly #stateDir: string
  readonly #euid: number

  constructor(stateDir: string, euid: number) {
    this.#stateDir = stateDir
    this.#euid = euid
  }

  /** Every level above `path`, from `/` down: made when missing, and no one else may rename in it. */
  above(path: string): void {
    const levels: string[] = []
    for (let level = dirname(path); ; level = dirname(level)) {
      levels.unshift(level)
      if (level === parse(level).root) break
    }
    for (const level of levels) {
      const stat = this.#made(level)
      if (stat.isSymbolicLink()) {
        // The link's parent was checked; the link itself and everything it leads to must be too.
        this.#owner(level, stat, ', above it,')
        const real = realpathSync(level)
        this.above(real)
        this.#ancestor(real, lstatSync(real))
      } else this.#ancestor(level, stat)
    }
  }

  /** The state directory itself (a link to one is followed once, and checked) or its `runs/`. */
  own(path: string, mayLink: boolean): void {
    let stat = this.#made(path)
    if (stat.isSymbolicLink() && mayLink) {
      this.#owner(path, stat, '')
      const real = realpathSync(path)
      this.above(real)
      stat = lstatSync(real)
      path = real
    }
    if (!stat.isDirectory())
      this.#fail(
        `${path} is not a directory`,
        `remove it (or what it links to), or start toolvisor with another --state-dir`,
      )
    if (stat.uid !== this.#euid)
      this.#fail(
        `${path} is owned by uid ${stat.uid}, not by toolvisor's uid ${this.#euid}, so that user could swap what toolvisor writes there for links to any file`,
        `chown ${this.#euid} ${path} and chmod 700 ${path}, or start toolvisor with another --state-dir`,
      )
    if ((stat.mode & 0o022) !== 0)
      this.#fail(
        `${path} is writable by group or others (mode ${mode(stat)}), so another user could swap what toolvisor writes there for links to any file`,
        `chmod 700 ${path}, or start toolvisor with another --state-dir`,
      )
  }

  /** A directory above: root's or ours, and others may not rename in it unless it is sticky. */
  #ancestor(path: string, stat: Stats): void {
    if (!stat.isDirectory())
      this.#fail(`${path}, above it, is not a directory`, 'start toolvisor with another --state-dir')
    this.#owner(path, stat, ', above it,')
    if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0)
      this.#fail(
        `${path}, above it, is writable by group or others without the sticky bit (mode ${mode(stat)}), so another user could rename what is in it and put a link in its place`,
        `chmod go-w ${path} (or chmod +t), or start toolvisor with another --state-dir`,
      )
  }

  /** `where`: how the path stands to the state directory in the message (`, above it,`). */
  #owner(path: string, stat: Stats, where: string): void {
    if (stat.uid === 0 || stat.uid === this.#euid) return
    const what = stat.isSymbolicLink() ? 'a link' : 'a directory'
    this.#fail(
      `${path}${where} is ${what} owned by uid ${stat.uid} (neither root nor toolvisor's uid ${this.#euid}), so that user could rename what is in it and put a link in its place`,
      "start toolvisor with a --state-dir whose every parent is root's or toolvisor's own",
    )
  }

  /** `path`'s lstat, after making it (mode 0700) when it is missing. */
  #made(path: string): Stats {
    const found = lstatSync(path, { throwIfNoEntry: false })
    if (found !== undefined) return found
    try {
      mkdirSync(path, { mode: 0o700 })
    } catch (error) {
      // Made meanwhile (by another start: its checks are ours next), or not makeable.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        this.#fail(
          `${path} cannot be made: ${(error as NodeJS.ErrnoException).code ?? error}`,
          'make it, or start toolvisor with another --state-dir',
        )
    }
    return lstatSync(path)
  }

  #fail(what: string, fix: string): never {
    throw new RuntimeError(
      'RUNTIME_ERR_STATE_DIR',
      `the state directory ${this.#stateDir} is not safe to use: ${what}: ${fix}`,
    )
  }
}

function mode(stat: Stats): string {
  return `0${(stat.mode & 0o7777).toString(8)}`
}

/**
 * The one listing of the state directory's runs: calls `visit` with each run directory of
 * `runs/`, held (and let go after). A link or a file there is no run of toolvisor's: it is skipped,
 * or given to `notRun` by its name (the disk budget prunes it).
 */
export function eachRun(
  stateDir: string,
  visit: (run: HeldDirectory, runId: string) => void,
  notRun?: (name: string) => void,
): void {
  let runs: HeldDirectory
  try {
    runs = HeldDirectory.open(join(stateDir, 'runs'))
  } catch {
    return
  }
  try {
    for (const runId of runs.names()) {
      let run: HeldDirectory
      try {
        run = runs.child(runId)
      } catch {
        notRun?.(runId)
        continue
      }
      try {
        visit(run, runId)
      } finally {
        run.close()
      }
    }
  } finally {
    runs.close()
  }
}
