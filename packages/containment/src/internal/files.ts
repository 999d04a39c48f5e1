// The cgroup filesystem's files, read and written without throwing (host.ts, containment.ts).
import { closeSync, mkdirSync, openSync, readSync, rmdirSync, writeFileSync } from 'node:fs'

const buffer = Buffer.alloc(4096)

/**
 * A cgroup file's text (its first 4 KiB: every file read here is a few lines), or undefined
 * (absent, gone, not readable). One open, read and close: half what readFileSync costs, on the
 * path of every launch's end.
 */
export function read(path: string): string | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    return buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0))
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/** A cgroup file opened for reading again and again (`readHeld`), or undefined. */
export function openHeld(path: string): number | undefined {
  try {
    return openSync(path, 'r')
  } catch {
    return undefined
  }
}

/** The text of a held cgroup file, read from its start (a cgroup file is generated at each read). */
export function readHeld(fd: number): string | undefined {
  try {
    return buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0))
  } catch {
    return undefined
  }
}

/** Writes a cgroup file; the error code when refused, undefined when done. */
export function writeTo(path: string, value: string): string | undefined {
  try {
    writeFileSync(path, value)
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EIO'
  }
}

/**
 * Makes a cgroup directory (and the ones above it, when missing), there already being fine; the
 * error code when refused, the kernel's own (a recursive mkdir alone says ENOENT for an EAGAIN at
 * `cgroup.max.descendants`).
 */
export function makeDir(path: string): string | undefined {
  try {
    mkdirSync(path)
    return undefined
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return undefined
    if (code !== 'ENOENT') return code ?? 'EIO'
  }
  try {
    mkdirSync(path, { recursive: true })
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EIO'
  }
}

/** Removes an empty cgroup; false when it cannot be removed yet (EBUSY: still populated). */
export function removeDir(path: string): boolean {
  try {
    // rmdir, not rm: a cgroup's files cannot be unlinked, only the directory removed.
    rmdirSync(path)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}
