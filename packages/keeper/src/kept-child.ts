import { EventEmitter } from 'node:events'
import { closeSync, constants, openSync, read, rmSync, statSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { constants as os } from 'node:os'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import type { Child } from '@toolvisor/process-runtime'

/** The names of signals by number, as an exit reports them. */
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(os.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
)

/** The keeper protocol this client speaks (`toolvisor-keeper`'s VERSION). */
export const KEEPER_PROTOCOL = 1

/** What a kept child says of its process as it goes (`KeptChild.state`). */
export interface KeptState {
  /** Bytes of stdout (`out`) and stderr (`err`) the keeper's files hold. */
  readonly out: number
  readonly err: number
  /** Bytes the keeper dropped past its cap, per stream. */
  readonly dropped: { readonly out: number; readonly err: number }
}

/**
 * One stream of a kept process, read from the keeper's file (`DIR/out`, `DIR/err`) as the keeper
 * says it grew: from the file's first byte, so a daemon that re-adopts the process reads every
 * byte it wrote, the ones written while no daemon ran included, in order and once.
 */
export class KeptStream extends Readable {
  readonly #path: string
  #fd: number | undefined
  #offset = 0
  #length = 0
  #ended = false
  #reading = false
  #wanted = false
  #trailer: string | undefined

  constructor(path: string) {
    super({ highWaterMark: 1 << 20 })
    this.#path = path
  }

  /** The keeper's file holds `length` bytes now. */
  grew(length: number): void {
    if (length > this.#length) this.#length = length
    this.#pump()
  }

  /** The stream closed: once its file is read to `length` (what it was told last), it ends (`trailer` last). */
  end(trailer?: string): void {
    if (trailer) this.#trailer = trailer
    this.#ended = true
    this.#pump()
  }

  override _read(): void {
    this.#wanted = true
    this.#pump()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
    callback(error)
  }

  #pump(): void {
    if (this.#reading || !this.#wanted || this.destroyed) return
    if (this.#offset >= this.#length) {
      if (this.#ended) {
        this.#wanted = false
        if (this.#trailer !== undefined) this.push(Buffer.from(this.#trailer))
        this.#trailer = undefined
        this.push(null)
      }
      return
    }
    try {
      this.#fd ??= openSync(this.#path, constants.O_RDONLY | constants.O_NOFOLLOW)
    } catch (error) {
      this.destroy(error as Error)
      return
    }
    this.#reading = true
    const size = Math.min(this.#length - this.#offset, 1 << 20)
    const buffer = Buffer.allocUnsafe(size)
    read(this.#fd, buffer, 0, size, this.#offset, (error, n) => {
      this.#reading = false
      if (error) return void this.destroy(error)
      if (n === 0) {
        // Shorter than told: the file was cut under it (its directory removed); what is there was read.
        this.#length = this.#offset
        return void this.#pump()
      }
      this.#offset += n
      this.#wanted = this.push(buffer.subarray(0, n))
      this.#pump()
    })
  }
}

/**
 * A kept process as the runtime uses a child (`Child`), over its keeper's socket (`DIR/sock`): its
 * pid and exit from the keeper's lines, its stdout and stderr from the keeper's files, its stdin
 * as `IN` messages (a write waits while the socket is full). Connect with {@link KeptChild.connect};
 * the same object serves the launch that started it and a daemon that re-adopts it later.
 */
export class KeptChild extends EventEmitter implements Child {
  readonly dir: string
  pid: number | undefined
  /** The keeper's own pid (told with the process's). */
  keeper: number | undefined
  /** The keeper's protocol version (`KEEPER_PROTOCOL` is the one this client speaks). */
  version: number | undefined
  readonly stdin: Writable
  readonly stdout: KeptStream
  readonly stderr: KeptStream
  #socket: Socket
  #text = ''
  #ends = 0
  #closed = false
  #state = { out: 0, err: 0, dropped: { out: 0, err: 0 } }
  #exitTold = false
  #exitEmitted = false

  private constructor(dir: string, socket: Socket) {
    super()
    this.dir = dir
    this.#socket = socket
    this.stdout = new KeptStream(join(dir, 'out'))
    this.stderr = new KeptStream(join(dir, 'err'))
    for (const stream of [this.stdout, this.stderr]) stream.once('end', () => this.#ended())
    this.stdin = new Writable({
      highWaterMark: 1 << 16,
      write: (chunk: Buffer, _encoding, callback) => {
        this.#send(Buffer.concat([Buffer.from(`IN ${chunk.length}\n`), chunk]), callback)
      },
      final: (callback) => this.#send(Buffer.from('CLOSE\n'), callback),
    })
    this.stdin.on('error', () => {}) // a write after the keeper went: the exit says what happened
    socket.setEncoding('utf8')
    socket.on('data', (text: string) => this.#take(text))
    socket.on('error', () => {})
    socket.on('close', () => this.#lost())
  }

  /**
   * Connects to the keeper in `dir` with the state directory's keeper secret; resolves once the
   * keeper told the pid (its welcome), rejects when nothing answers there (no keeper, or one that
   * refused the secret).
   */
  static connect(dir: string, secret: string): Promise<KeptChild> {
    return new Promise((resolve, reject) => {
      const socket = connect(join(dir, 'sock'))
      const failed = (error: Error) => reject(new Error(`no keeper answers in ${dir}: ${error.message}`))
      socket.once('error', failed)
      socket.once('connect', () => {
        socket.off('error', failed)
        const child = new KeptChild(dir, socket)
        const early = () => reject(new Error(`the keeper in ${dir} closed the connection (a wrong secret?)`))
        socket.once('close', early)
        child.once('pid', () => {
          socket.off('close', early)
          if (child.version === KEEPER_PROTOCOL) return resolve(child)
          // Another version's keeper (an upgrade that changed the protocol): refused, never misread.
          child.detach()
          reject(
            new Error(
              `the keeper in ${dir} speaks protocol ${child.version}, this toolvisor ${KEEPER_PROTOCOL}: ` +
                'this version cannot take it back (the version that kept it can)',
            ),
          )
        })
        socket.write(`HELLO ${secret}\n`)
      })
    })
  }

  /** The keeper's files as last told. */
  get state(): KeptState {
    return this.#state
  }

  /** Forgets the keeper without releasing it: the process goes on, for a later daemon to re-adopt. */
  detach(): void {
    this.#closed = true
    this.#socket.destroy()
    this.stdout.destroy()
    this.stderr.destroy()
  }

  #send(bytes: Buffer, callback: (error?: Error | null) => void): void {
    if (this.#socket.destroyed) callback(new Error('its keeper is gone'))
    else if (this.#socket.write(bytes)) callback()
    else this.#socket.once('drain', () => callback())
  }

  #take(text: string): void {
    this.#text += text
    let newline = this.#text.indexOf('\n')
    while (newline >= 0) {
      this.#line(this.#text.slice(0, newline))
      this.#text = this.#text.slice(newline + 1)
      newline = this.#text.indexOf('\n')
    }
  }

  #line(line: string): void {
    const [word, a, b, c] = line.split(' ')
    if (word === 'PID') {
      this.pid = Number(a)
      this.keeper = b === undefined ? undefined : Number(b)
      this.version = c === undefined ? 0 : Number(c)
      this.emit('pid', this.pid)
    } else if (word === 'OUT') {
      this.#state.out = Number(a)
      this.stdout.grew(this.#state.out)
    } else if (word === 'ERR') {
      this.#state.err = Number(a)
      this.stderr.grew(this.#state.err)
    } else if (word === 'DROP') {
      const key = a === '1' ? 'out' : 'err'
      this.#state.dropped = { ...this.#state.dropped, [key]: Number(b) }
    } else if (word === 'END') {
      if (a === '1') this.stdout.end()
      else this.stderr.end(droppedNote(this.#state.dropped))
    } else if (word === 'EXIT') {
      const code = a === '-' ? null : Number(a)
      const signal = b === '-' ? null : (SIGNAL_NAMES.get(Number(b)) ?? 'SIGKILL')
      this.#exited(code, signal)
    }
  }

  #exited(code: number | null, signal: NodeJS.Signals | null, why?: string): void {
    if (this.#exitTold) return
    this.#exitTold = true
    // Told on a later turn, as Node's own child does: whoever just got this child (a connect that
    // resolved on the welcome, with the exit right after it) listens first.
    setImmediate(() => {
      this.#exitEmitted = true
      this.emit('exit', code, signal, why)
      this.#maybeClose()
    })
  }

  #ended(): void {
    this.#ends++
    this.#maybeClose()
  }

  /** Both streams read to their end and the exit told: the keeper may go (`RELEASE`). */
  #maybeClose(): void {
    if (this.#ends < 2 || !this.#exitEmitted || this.#closed) return
    this.#closed = true
    this.#socket.end('RELEASE\n')
    // The keeper removes its directory on RELEASE; one killed first (its cgroup ended with the
    // process) leaves it: removed here too, what was read being read.
    rmSync(this.dir, { recursive: true, force: true })
    setImmediate(() => this.emit('close'))
  }

  /** The socket closed before the exit was told: its keeper was killed; what its files hold is read. */
  #lost(): void {
    if (this.#closed) return
    for (const [stream, name] of [
      [this.stdout, 'out'],
      [this.stderr, 'err'],
    ] as const) {
      stream.grew(sizeOf(join(this.dir, name)))
      stream.end()
    }
    this.#exited(null, 'SIGKILL', 'its keeper ended before the process did')
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/** What stderr ends with when the keeper dropped bytes past its cap (none: nothing). */
function droppedNote(dropped: KeptState['dropped']): string | undefined {
  const parts = [
    dropped.out > 0 ? `${dropped.out} bytes of stdout` : '',
    dropped.err > 0 ? `${dropped.err} bytes of stderr` : '',
  ].filter(Boolean)
  if (parts.length === 0) return undefined
  return `\n[toolvisor: ${parts.join(' and ')} past the keeper's cap were not kept (decision 0113)]\n`
}
