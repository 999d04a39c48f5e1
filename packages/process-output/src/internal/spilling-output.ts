import { closeSync, constants, readSync, writeSync } from 'node:fs'
import type { SpillAllowance, SpillCut } from '@toolvisor/run-state'
import { fileAt, type HeldFile } from '@toolvisor/run-state'
import type { SpillStages } from '../stages.js'

/**
 * One output stream of a process: the first `limit` bytes in memory (for results), a rolling tail
 * (for error reports, and the newest bytes a reader asks for), and, once the stream passes
 * `limit`, a spill file (mode 0600) holding its bytes from the first one. The spill keeps at most
 * `cap` bytes, and only what the disk budget grants (`allowance`): past either it is cut, and
 * `spillCut` says where and why (decision 0092). Memory and disk stay bounded.
 */
export class SpillingOutput {
  readonly #limit: number
  readonly #tailBytes: number
  /** The spill file: opened through the run's held spill directory, never through a link. */
  readonly #spill: HeldFile
  #head: Buffer[] = []
  #headLength = 0
  #tail: Buffer[] = []
  #tailLength = 0
  #total = 0
  #fd: number | undefined
  #spilled = false
  #spillError: Error | undefined
  /** The head left memory for the spill file (a finished process, compacted). */
  #compacted = false
  /** Spill writes past the page cache, for a bulk stream (`Spawner.spillStages`), where the file system allows. */
  readonly #stages: ((fd: number) => SpillStages | undefined) | undefined
  #writer: SpillStages | undefined
  /** The most bytes the spill file may hold (`spillBytes`). */
  readonly #cap: number
  /** The disk budget each spill write asks first, when there is one. */
  readonly #allowance: SpillAllowance | undefined
  /** Bytes handed to the spill file (what the budget granted): bytes 0 to `#kept` of the stream. */
  #kept = 0
  #cut: SpillCut | undefined

  constructor(options: {
    readonly limit: number
    readonly tailBytes: number
    /** The spill file, or a path (opened without following a link at it). */
    readonly spill: HeldFile | string
    /** Its spill file is written in stages (`launch-native`'s O_DIRECT writer) when they can be had. */
    readonly stages?: ((fd: number) => SpillStages | undefined) | undefined
    /** The most bytes the spill file may hold. Default: no cap. */
    readonly cap?: number
    readonly allowance?: SpillAllowance
  }) {
    this.#limit = options.limit
    this.#tailBytes = options.tailBytes
    this.#spill = typeof options.spill === 'string' ? fileAt(options.spill) : options.spill
    this.#stages = options.stages
    this.#cap = options.cap ?? Number.POSITIVE_INFINITY
    this.#allowance = options.allowance
  }

  /** Where the spill file stops short of the stream, once it did (its cap, or the disk budget). */
  get spillCut(): SpillCut | undefined {
    return this.#cut
  }

  /** Bytes the spill file was given (at most the cap). */
  get spilledBytes(): number {
    return this.#kept
  }

  /** Bytes written so far. */
  get total(): number {
    return this.#total
  }

  /** The spill file, once the stream passed the limit. */
  get spillPath(): string | undefined {
    return this.#spilled ? this.#spill.path : undefined
  }

  /** Why spilling failed (disk full, ...): then bytes past the limit are lost, and reports say so. */
  get spillError(): Error | undefined {
    return this.#spillError ?? this.#writer?.error
  }

  /**
   * Puts in the spill file what is waiting in memory for it, as far as it can now (a staged write
   * still in flight lands on its own, a moment later): for a reader about to read the file.
   */
  flush(): void {
    this.#writer?.flush()
  }

  /** Resolves once the spill file holds every byte appended so far, `close()` apart (see `SpillStages`). */
  drained(): Promise<void> {
    return this.#writer?.drained() ?? Promise.resolve()
  }

  /** True when the head does not hold everything. */
  get truncated(): boolean {
    return this.#total > this.#limit
  }

  append(chunk: Buffer): void {
    this.#total += chunk.length
    if (this.#headLength < this.#limit) {
      const take = Math.min(chunk.length, this.#limit - this.#headLength)
      const kept = chunk.subarray(0, take)
      // A chunk that is a view of a larger buffer (a slab: launch-native reads bulk stdout so) is copied: the head,
      // kept for the life of the process, must not hold the slab. Node's own reads own theirs.
      this.#head.push(chunk.byteLength === chunk.buffer.byteLength ? kept : Buffer.from(kept))
      this.#headLength += take
    }
    this.#tail.push(chunk)
    this.#tailLength += chunk.length
    while (this.#tail.length > 1 && this.#tailLength - this.#tail[0]!.length >= this.#tailBytes) {
      this.#tailLength -= this.#tail.shift()!.length
    }
    if (this.#spilled) this.#write(chunk)
    else if (this.#total > this.#limit) this.#startSpill(chunk)
  }

  /** The first bytes (at most `limit`). */
  head(): Buffer {
    if (this.#compacted) return this.read(0, Math.min(this.#total, this.#limit))
    return Buffer.concat(this.#head, this.#headLength)
  }

  /** The last `n` bytes (at most the tail bound). */
  tail(n = this.#tailBytes): Buffer {
    const all = Buffer.concat(this.#tail, this.#tailLength)
    return all.subarray(Math.max(0, all.length - n))
  }

  /**
   * Reads `length` bytes from `offset` of everything written: from memory when the head holds them,
   * else from the spill file (up to where it was cut), else from the tail in memory. Returns fewer
   * bytes at the end (of the stream, or of what the spill file holds), none when they are not
   * available (not kept anywhere).
   */
  read(offset: number, length: number): Buffer {
    const end = Math.min(offset + length, this.#total)
    if (end <= offset) return Buffer.alloc(0)
    if (end <= this.#headLength && !this.#compacted) return this.head().subarray(offset, end)
    if (this.#spilled && !this.spillError && offset < this.#kept)
      return this.#readFile(offset, Math.min(end, this.#kept))
    // The newest bytes are still in memory, past a cut (or with no spill file at all): the tail's
    // bound of them, whatever its chunks happen to hold beyond it.
    const tail = this.tail()
    const tailStart = this.#total - tail.length
    if (offset >= tailStart) return tail.subarray(offset - tailStart, end - tailStart)
    return Buffer.alloc(0)
  }

  #readFile(offset: number, end: number): Buffer {
    const fd = this.#spill.open(constants.O_RDONLY)
    try {
      const writer = this.#writer
      const buffer = writer ? Buffer.alloc(end - offset) : Buffer.allocUnsafe(end - offset)
      const read = readSync(fd, buffer, 0, buffer.length, offset)
      if (writer === undefined) return buffer.subarray(0, read)
      // What is not in the file yet is in a stage.
      writer.overlay(buffer, offset)
      return buffer
    } finally {
      closeSync(fd)
    }
  }

  /** Bytes held in memory (head and tail, and the stages of a spill written past the page cache). */
  get heldBytes(): number {
    return this.#headLength + this.#tailLength + (this.#writer?.heldBytes ?? 0)
  }

  /**
   * Moves everything to the spill file (writing it now if the stream never passed the bound) and
   * drops the head from memory; reads then come from the file. Keeps the small tail. Returns false
   * (and keeps the head) when the file cannot be written, or does not hold the head (its cap, or
   * the budget, cut it before): past a cut the events are not readable back from the file either.
   */
  compact(): boolean {
    if (!this.#spilled) {
      if (this.#total === 0) return true
      const head = this.head()
      if (head.length > this.#cap || (this.#allowance?.take(head.length) ?? head.length) < head.length)
        return false
      try {
        const fd = this.#spill.open(constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC)
        try {
          writeSync(fd, head)
        } finally {
          closeSync(fd)
        }
        this.#spilled = true
        this.#kept = head.length
      } catch (error) {
        this.#spillError = error as Error
        return false
      }
    }
    if (this.#spillError || this.#kept < Math.min(this.#total, this.#limit)) return false
    this.#head = []
    this.#headLength = 0
    this.#compacted = true
    return true
  }

  /** Closes the spill file for writing (it stays readable). */
  close(): void {
    this.#writer?.close()
    if (this.#fd !== undefined) {
      closeSync(this.#fd)
      this.#fd = undefined
    }
  }

  #startSpill(chunk: Buffer): void {
    try {
      this.#fd = this.#spill.open(constants.O_RDWR | constants.O_CREAT | constants.O_TRUNC)
      this.#spilled = true
      this.#writer = this.#stages?.(this.#fd)
      // Everything before this chunk is in the head (the limit had not been passed yet).
      const before = this.head().subarray(0, this.#total - chunk.length)
      this.#write(before)
      this.#write(chunk)
    } catch (error) {
      this.#spillError = error as Error
    }
  }

  #write(all: Buffer): void {
    if (this.#fd === undefined || this.#spillError || this.#cut !== undefined) return
    const bytes = this.#granted(all)
    if (bytes.length === 0) return
    if (this.#writer) {
      this.#writer.write(bytes)
      return
    }
    try {
      let written = 0
      // A synchronous write applies backpressure to the producer for free and keeps memory flat.
      while (written < bytes.length) written += writeSync(this.#fd, bytes, written, bytes.length - written)
    } catch (error) {
      this.#spillError = error as Error
    }
  }

  /**
   * What of `bytes` the spill file may take: within its cap, and what the budget grants. Short of
   * all of it, the spill is cut there for good (a later, smaller write would leave a hole).
   */
  #granted(bytes: Buffer): Buffer {
    const room = Math.min(bytes.length, this.#cap - this.#kept)
    const granted = this.#allowance === undefined ? room : this.#allowance.take(room)
    this.#kept += granted
    if (granted < bytes.length) {
      const budget = granted < room && this.#allowance !== undefined
      this.#cut = {
        kept: this.#kept,
        why: budget ? 'budget' : 'cap',
        bound: budget ? this.#allowance!.budget : this.#cap,
      }
    }
    return granted === bytes.length ? bytes : bytes.subarray(0, granted)
  }
}
