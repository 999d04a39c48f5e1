import { type ChildProcess, spawnSync } from 'node:child_process'
import {
  closeSync,
  constants,
  fstatSync,
  mkdtempSync,
  openSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Both ends of a pipe, blocking (the child's end keeps the mode a shell gives it). */
export interface PipeEnds {
  readonly read: number
  readonly write: number
}

/** How many FIFOs one mkfifo(1) run makes ahead. */
const BATCH = 48

/**
 * The standard descriptors Node's own spawn gives a tool when there is no fork server: its
 * `'pipe'` stdio is a socket pair, where `cat /dev/stdin` and `> /dev/stderr` fail with ENXIO, and
 * Node has no pipe(2). So, in a directory of this process's own (mode 0700):
 * - stdout and stderr: FIFOs made ahead by one mkfifo(1) per {@link BATCH}, each opened at both
 *   ends and unlinked at once. A FIFO without a name is a pipe but for the filesystem its inode is
 *   on: `> /dev/stdout`, `tee /dev/stderr`, `/proc/self/fd/N` and `test -p` all work, since the
 *   runtime holds the reading end until the output is drained.
 * - stdin given whole (closed right after its bytes): a file holding them, unlinked once open.
 *   Not a FIFO: opening a FIFO for reading waits for a writer, so a `cat /dev/stdin` after the
 *   runtime closed its end would wait for ever, where a pipe's gives end of file. A file reads the
 *   same, and opens again from its start.
 * - stdin kept open (a service's input): a socket pair as before (reopening it fails with ENXIO;
 *   decision 0098).
 * The fork server gives real pipes on every descriptor. `undefined` from {@link pipe}: no FIFO can
 * be made here (no mkfifo), and the caller falls back to socket pairs; {@link reason} says why.
 * Throws what an open threw (out of descriptors): that launch fails, saying so.
 */
class NodePipes {
  #dir: string | undefined
  #names: string[] = []
  #made = 0
  #reason: string | undefined

  get reason(): string | undefined {
    return this.#reason
  }

  pipe(): PipeEnds | undefined {
    if (this.#reason !== undefined) return undefined
    const name = this.#names.pop() ?? this.#refill()
    if (name === undefined) return undefined
    const opened: number[] = []
    try {
      // Read-write first: a FIFO's open for one way waits for the other end otherwise.
      const both = openSync(name, constants.O_RDWR)
      opened.push(both)
      if (!fstatSync(both).isFIFO()) throw new Error(`${name} is not a FIFO`)
      const read = openSync(name, constants.O_RDONLY)
      opened.push(read)
      const write = openSync(name, constants.O_WRONLY)
      opened.push(write)
      closeSync(both)
      return { read, write }
    } catch (error) {
      for (const fd of opened) closeSync(fd)
      throw error
    } finally {
      try {
        unlinkSync(name)
      } catch {
        // gone already: nothing to remove
      }
    }
  }

  /** A descriptor reading `bytes` from their start, of a file no name leads to; undefined as {@link pipe}. */
  file(bytes: Uint8Array): number | undefined {
    if (this.#reason !== undefined || !this.#ensureDir()) return undefined
    const name = join(this.#dir!, `in-${this.#made++}`)
    try {
      writeFileSync(name, bytes, { mode: 0o600, flag: 'wx' })
      return openSync(name, constants.O_RDONLY)
    } finally {
      try {
        unlinkSync(name)
      } catch {
        // never made: nothing to remove
      }
    }
  }

  #ensureDir(): boolean {
    try {
      this.#dir ??= ownDir()
      return true
    } catch (error) {
      this.#reason = `no directory of its own for pipes: ${(error as Error).message}`
      return false
    }
  }

  #refill(): string | undefined {
    if (!this.#ensureDir()) return undefined
    const names = Array.from({ length: BATCH }, () => join(this.#dir!, String(this.#made++)))
    const made = spawnSync('mkfifo', ['-m', '600', '--', ...names], {
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    })
    if (made.status !== 0) {
      this.#reason = `mkfifo failed: ${made.error?.message ?? made.stderr.trim() ?? `exit ${made.status}`}`
      return undefined
    }
    this.#names = names.reverse()
    return this.#names.pop()
  }
}

function ownDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolvisor-pipes-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** This process's maker of standard descriptors for Node's own spawn. */
export const nodePipes = new NodePipes()

/**
 * The standard descriptors of a spawn without the fork server (see `NodePipes`): the child's
 * (`theirs`) and the runtime's (`ours`, stdin's absent when it is a file); undefined where no pipe
 * can be made, and the spawn gives socket pairs as before.
 */
export function standardPipes(
  stdinFile: Uint8Array | undefined,
): { readonly theirs: number[]; readonly ours: (number | undefined)[] } | undefined {
  const ends: PipeEnds[] = []
  let file: number | undefined
  try {
    for (let i = 0; i < 3; i++) {
      const pipe = i === 0 && stdinFile !== undefined ? undefined : nodePipes.pipe()
      if (pipe !== undefined) ends.push(pipe)
    }
    if (stdinFile !== undefined && ends.length === 2) file = nodePipes.file(stdinFile)
  } catch (error) {
    closeEnds(ends)
    throw error
  }
  const whole = ends.length === 3 || (ends.length === 2 && file !== undefined)
  if (!whole) {
    closeEnds(ends)
    if (file !== undefined) closeSync(file)
    return undefined
  }
  const [stdin, stdout, stderr] = file === undefined ? ends : [undefined, ...ends]
  return {
    theirs: [stdin?.read ?? file!, stdout!.write, stderr!.write],
    ours: [stdin?.write, stdout!.read, stderr!.read],
  }
}

function closeEnds(ends: readonly PipeEnds[]): void {
  for (const end of ends) {
    closeSync(end.read)
    closeSync(end.write)
  }
}

/**
 * The child's stdin, stdout and stderr: sockets over the runtime's ends of its pipes, which they
 * own (stdin null when it is a file: all of it is given).
 */
export function overPipes(child: ChildProcess, ends: readonly (number | undefined)[]): void {
  const [stdin, stdout, stderr] = ends.map((fd, i) =>
    fd === undefined
      ? null
      : new Socket({ fd, readable: i !== 0, writable: i === 0 } as ConstructorParameters<typeof Socket>[0]),
  )
  Object.assign(child, { stdin, stdout, stderr })
  const stdio = child.stdio as unknown as (Socket | null)[]
  stdio[0] = stdin ?? null
  stdio[1] = stdout ?? null
  stdio[2] = stderr ?? null
}
