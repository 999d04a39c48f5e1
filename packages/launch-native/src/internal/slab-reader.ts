import type { Socket } from 'node:net'

/** The smallest slab, and the least a read is offered: a slab with less left is retired. */
export const MIN_SLAB = 16 * 1024
/** The largest slab: about what one read takes when the producer is far ahead. */
export const MAX_SLAB = 1024 * 1024

/**
 * How a tool's output socket is read (decision 0083): into slabs, each read taking what follows
 * the previous one in the same slab, where Node's default allocates a fresh 64 KiB buffer per
 * read. A producer that is ahead then hands over a few hundred KiB per read, so 512 MiB of output
 * costs about 2,000 reads, spill writes and events instead of 8,500: the per-read costs the runtime
 * pays on top of a bare read shrink with them.
 *
 * A slab starts at {@link MIN_SLAB} and doubles (up to {@link MAX_SLAB}) each time a read fills what
 * it was offered (the socket held at least as much: the producer is ahead). A chunk of a read of at
 * least `MIN_SLAB` is a view of its slab, and a slab is retired once less than `MIN_SLAB` is left,
 * so every slab is at least half chunks and what held chunks pin is at most twice their bytes. A
 * smaller read is copied out and its buffer offered again (a trickle of small lines does not pin a
 * slab per line), and it says the producer is not ahead: the next read goes to a slab of
 * `MIN_SLAB`, so a stream gone quiet holds 16 KiB waiting, not a big slab.
 *
 * Slabs are zeroed: a chunk's `buffer` (which a consumer may read past the view) holds this stream's
 * earlier bytes and zeros, never memory of anything else in the process (Node's own pool would).
 */
export class SlabReader {
  #size = MIN_SLAB
  #slab: Buffer | undefined
  #used = 0

  /** The buffer the next read goes into: the rest of the slab, or a new slab. */
  next(): Buffer {
    if (this.#slab === undefined || this.#slab.length - this.#used < MIN_SLAB) {
      this.#slab = Buffer.alloc(this.#size)
      this.#used = 0
    }
    return this.#slab.subarray(this.#used)
  }

  /** `n` bytes were read into `offered` (what `next` returned last): the chunk they are. */
  took(n: number, offered: Buffer): Buffer {
    if (n < MIN_SLAB) {
      if (this.#size > MIN_SLAB) {
        this.#size = MIN_SLAB
        this.#slab = undefined
      }
      // Its own memory (not Node's shared pool): a chunk's `buffer` holds nothing but this stream.
      const copy = Buffer.allocUnsafeSlow(n)
      offered.copy(copy, 0, 0, n)
      return copy
    }
    this.#used += n
    if (n === offered.length) this.#size = Math.min(MAX_SLAB, this.#size * 2)
    return offered.subarray(0, n)
  }
}

/**
 * The `onread` option of a `Socket` reading a tool's output into slabs. Each chunk is pushed into
 * the socket as Node's own read would (so `data`, `end`, `setEncoding`, a paused stream's buffer
 * and its backpressure all work as without: a push past the high-water mark stops reading until
 * the stream is read again). `attach` the socket once constructed (its first read comes on a later
 * turn of the loop).
 */
export function slabOnread(): {
  readonly onread: { buffer: () => Buffer; callback: (n: number, offered: Buffer) => boolean }
  attach(socket: Socket): void
} {
  const reader = new SlabReader()
  let socket: Socket | undefined
  return {
    onread: {
      buffer: () => reader.next(),
      callback: (n, offered) => socket?.push(reader.took(n, offered)) ?? false,
    },
    attach(to) {
      socket = to
    },
  }
}
