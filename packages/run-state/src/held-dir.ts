import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmdirSync,
  rmSync,
  type Stats,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'

/** How a held directory is opened: never through a link, and only a directory. */
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/** A file of a held directory, as a spill file needs it: the path reported, and how to open it. */
export interface HeldFile {
  /** The path the file was made at (what results and `check --probe` report). */
  readonly path: string
  /** Opens it with `flags` (O_NOFOLLOW added: a link at its name is refused, never followed). */
  open(flags: number, mode?: number): number
  /** Removes it (nothing when it is gone). */
  remove(): void
}

/**
 * A directory toolvisor made and holds open (decision 0092). Node has no `openat`, so a file in it
 * is opened as `/proc/self/fd/<fd>/<name>`: the kernel resolves the magic link to the directory
 * held, whatever was renamed or linked at its path meanwhile, and O_NOFOLLOW refuses a link at the
 * name itself. Once closed, its files are opened by path (still without following a link at the
 * name): the fd number may belong to something else by then.
 */
export class HeldDirectory {
  /** The path it was made at. */
  readonly path: string
  #fd: number | undefined

  private constructor(path: string, fd: number) {
    this.path = path
    this.#fd = fd
  }

  /** Holds the directory at `path`; a link there is refused (ELOOP), as is anything but a directory. */
  static open(path: string): HeldDirectory {
    return new HeldDirectory(path, openSync(path, DIRECTORY_FLAGS))
  }

  /** The directory this process was handed at `fd` (the watchdog's fd 3), known as `path`. */
  static handed(path: string, fd: number): HeldDirectory {
    if (!fstatSync(fd).isDirectory()) throw new Error(`fd ${fd} is not the directory ${path}`)
    return new HeldDirectory(path, fd)
  }

  /** The descriptor held (for a child that is handed it), while held. */
  get fd(): number | undefined {
    return this.#fd
  }

  /** Makes the directory `name` in this one (mode 0700) and holds it. */
  makeChild(name: string): HeldDirectory {
    const at = this.at(name)
    mkdirSync(at, { mode: 0o700 })
    return new HeldDirectory(join(this.path, name), openSync(at, DIRECTORY_FLAGS))
  }

  /** Holds the directory `name` of this one (a link there is refused). */
  child(name: string): HeldDirectory {
    return new HeldDirectory(join(this.path, name), openSync(this.at(name), DIRECTORY_FLAGS))
  }

  /** The path that names `name` in the very directory held (its own path once closed). */
  at(name: string): string {
    return this.#fd === undefined ? join(this.path, name) : `/proc/self/fd/${this.#fd}/${name}`
  }

  /** The file `name` of this directory. */
  file(name: string): HeldFile {
    return {
      path: join(this.path, name),
      open: (flags, mode = 0o600) => this.open(name, flags, mode),
      remove: () => rmSync(this.at(name), { force: true }),
    }
  }

  /** Opens `name` in this directory, never through a link. */
  open(name: string, flags: number, mode = 0o600): number {
    return openSync(this.at(name), flags | constants.O_NOFOLLOW, mode)
  }

  /**
   * The bytes of the regular file `name`, opened without following a link and without blocking
   * (a FIFO planted there is refused, not waited on).
   */
  read(name: string): Buffer {
    const fd = this.open(name, constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      const stat = fstatSync(fd)
      if (!stat.isFile())
        throw Object.assign(new Error(`${join(this.path, name)} is not a regular file`), { code: 'EINVAL' })
      const chunks: Buffer[] = []
      for (;;) {
        const chunk = Buffer.allocUnsafe(Math.max(4096, stat.size + 1))
        const n = readSync(fd, chunk, 0, chunk.length, null)
        if (n === 0) break
        chunks.push(chunk.subarray(0, n))
      }
      return Buffer.concat(chunks)
    } finally {
      closeSync(fd)
    }
  }

  /** Writes `name` whole: a new file (mode 0600), never through a link. */
  write(name: string, data: string): void {
    const fd = this.open(name, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC)
    try {
      const bytes = Buffer.from(data)
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at)
    } finally {
      closeSync(fd)
    }
  }

  /** Writes `name` atomically: a temporary file in this directory, then a rename over it. */
  replace(name: string, data: string): void {
    this.write(`${name}.tmp`, data)
    this.rename(`${name}.tmp`, name)
  }

  /** Renames `from` to `to`, both in this directory. */
  rename(from: string, to: string): void {
    renameSync(this.at(from), this.at(to))
  }

  /** The directory's own status (the one held, not what its path names now). */
  stat(): Stats {
    return this.#fd === undefined ? lstatSync(this.path) : fstatSync(this.#fd)
  }

  /** The names in this directory. */
  names(): string[] {
    return readdirSync(this.#fd === undefined ? this.path : `/proc/self/fd/${this.#fd}`)
  }

  /**
   * Removes everything in this directory, then the directory at its path if that is still the one
   * held (a link or another directory put there meanwhile is left alone), and lets it go.
   */
  removeWhole(): void {
    for (const name of this.names()) rmSync(this.at(name), { recursive: true, force: true })
    const fd = this.#fd
    if (fd !== undefined) {
      const held = fstatSync(fd)
      const there = lstatSync(this.path, { throwIfNoEntry: false })
      if (there !== undefined && there.ino === held.ino && there.dev === held.dev) rmdirSync(this.path)
    }
    this.close()
  }

  /** Lets the directory go. */
  close(): void {
    if (this.#fd === undefined) return
    closeSync(this.#fd)
    this.#fd = undefined
  }
}

/** A file opened by its path, never through a link at its name: for a stream spilled outside a held run. */
export function fileAt(path: string): HeldFile {
  return {
    path,
    open: (flags, mode = 0o600) => openSync(path, flags | constants.O_NOFOLLOW, mode),
    remove: () => rmSync(path, { force: true }),
  }
}
