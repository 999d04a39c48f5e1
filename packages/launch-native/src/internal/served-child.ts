import { EventEmitter } from 'node:events'
import { Socket } from 'node:net'
import type { Child, TerminalSize } from '@toolvisor/process-runtime'
import { slabOnread } from './slab-reader.js'

/** A child forked by the fork server (see `fork-server.ts`): its pid known at once, its exit told by the server. */
export class ServedChild extends EventEmitter implements Child {
  readonly pid: number
  readonly stdin: Socket
  readonly stdout: Socket
  readonly stderr: Socket
  readonly stdio: readonly (Socket | undefined)[]

  /** Resizes its terminal, when it was launched on one. */
  readonly resize?: (size: TerminalSize) => void

  constructor(pid: number, stdio: readonly (Socket | undefined)[], resize?: (size: TerminalSize) => void) {
    super()
    if (resize) this.resize = resize
    this.pid = pid
    this.stdio = stdio
    this.stdin = stdio[0]!
    this.stdout = stdio[1]!
    this.stderr = stdio[2]!
  }

  ended(code: number | null, signal: NodeJS.Signals | null, why?: string): void {
    // As Node's own child: stdin is of no use once the process is gone.
    this.stdin.destroy()
    this.emit('exit', code, signal, why)
  }
}

/**
 * Sockets over the runtime's ends of a served launch's descriptors (`handles` by descriptor
 * number, `count` of them; undefined where the descriptor is not passed). 0, 1 and 2 are pipes,
 * one way each: stdin written, stdout and stderr read. `stdoutInSlabs`: see `LaunchOptions`.
 */
export function socketsOver(
  handles: readonly (object | undefined)[],
  count: number,
  stdoutInSlabs: boolean,
): (Socket | undefined)[] {
  const sockets: (Socket | undefined)[] = []
  for (let i = 0; i < count; i++) {
    const handle = handles[i]
    if (handle === undefined) {
      sockets.push(undefined)
      continue
    }
    // `handle` is Node's own option for a socket over a handle it received (what its spawn uses).
    const slabs = i === 1 && stdoutInSlabs ? slabOnread() : undefined
    const options = { handle, readable: i !== 0, writable: i >= 3 || i === 0, onread: slabs?.onread }
    const socket = new Socket(options as ConstructorParameters<typeof Socket>[0])
    slabs?.attach(socket)
    sockets.push(socket)
  }
  return sockets
}
