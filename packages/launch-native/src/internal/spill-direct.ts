import { closeSync, constants, openSync, write, writeSync } from 'node:fs'

/**
 * The spill file of a bulk stream written past the page cache (decision 0084): bytes are copied
 * into 1 MiB stages of page-aligned memory and each full stage goes to the file with `O_DIRECT`,
 * asynchronously while another stage is free, so the next pipe read does not wait for the write.
 * A spill file is new page cache, and new page cache is what costs most where memory the guest
 * frees goes back to its host (docs/benchmarks.md, "The spill write on this VM").
 *
 * What a reader may rely on: `read` (through `SpillingOutput`) answers every byte, from a stage
 * when it is still in memory; the file holds every byte once `drained()` resolved and `close()`
 * ran (the runtime tells a process's exit only then); a stage that is not full is written to the
 * file after {@link IDLE_MS} without a new byte, so a quiet stream's file does not lag behind.
 */
export const STAGE = 1024 * 1024
/** Stages per WebAssembly memory: one stream's whole share (the stage it fills and those in flight). */
const STAGES_PER_MEMORY = 4
/** Stages one stream keeps in flight; past them it writes the next synchronously (backpressure). */
const MAX_FLYING = 3
/** At most this many stages in the process (32 MiB): past them a stream's writes wait. */
const MAX_STAGES = 32
const IDLE_MS = 50

/** What this package uses of the WebAssembly global (its tsconfig has no DOM or wasm types). */
declare const WebAssembly: { Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer } }

/** Stages not in use. Page-aligned: a WebAssembly memory is the only such memory JavaScript gets. */
const free: Buffer[] = []
let made = 0

function takeStage(): Buffer | undefined {
  if (free.length === 0 && made < MAX_STAGES) {
    let memory: Buffer
    try {
      memory = Buffer.from(new WebAssembly.Memory({ initial: (STAGES_PER_MEMORY * STAGE) / 65536 }).buffer)
    } catch {
      // No WebAssembly here (`node --jitless`), or no address space for it: the plain write then.
      made = MAX_STAGES
      return undefined
    }
    for (let i = 0; i < STAGES_PER_MEMORY; i++) free.push(memory.subarray(i * STAGE, (i + 1) * STAGE))
    made += STAGES_PER_MEMORY
  }
  return free.pop()
}

interface Flying {
  readonly at: number
  readonly stage: Buffer
}

export class StagedWriter {
  /** The file opened with `O_DIRECT`: full stages only, at offsets that are multiples of STAGE. */
  readonly #direct: number
  /** The spill file's own descriptor (not closed here): what is not a full stage. */
  readonly #plain: number
  /** The stage being filled: bytes from `#at`, `#fill` of them, the first `#flushed` also in the file. */
  #stage: Buffer | undefined
  #at = 0
  #fill = 0
  #flushed = 0
  readonly #flying: Flying[] = []
  #error: Error | undefined
  #closing = false
  #idle: NodeJS.Timeout | undefined
  #waiting: (() => void)[] = []

  private constructor(direct: number, plain: number, stage: Buffer) {
    this.#direct = direct
    this.#plain = plain
    this.#stage = stage
  }

  /**
   * A writer for the empty spill file open as `plain`, or undefined when its file system refuses
   * `O_DIRECT` or no stage is free: the caller then writes through `plain` as before.
   */
  static open(plain: number): StagedWriter | undefined {
    let direct: number
    try {
      // Through /proc: the very file `plain` is, not whatever its path names now (libuv adds O_CLOEXEC).
      direct = openSync(`/proc/self/fd/${plain}`, constants.O_WRONLY | constants.O_DIRECT)
    } catch {
      return undefined
    }
    const stage = takeStage()
    if (stage === undefined) {
      closeSync(direct)
      return undefined
    }
    return new StagedWriter(direct, plain, stage)
  }

  /** Why writing failed: bytes from then on are not in the file. */
  get error(): Error | undefined {
    return this.#error
  }

  /** Memory held: the stage being filled and those in flight. */
  get heldBytes(): number {
    return (this.#stage === undefined ? 0 : STAGE) + this.#flying.length * STAGE
  }

  /** Appends `bytes` after everything written before. */
  write(bytes: Buffer): void {
    if (this.#stage === undefined || this.#error || this.#closing) return
    for (let from = 0; from < bytes.length; ) {
      const n = Math.min(STAGE - this.#fill, bytes.length - from)
      // The stage as of now: a full one leaves for the file and the next takes its place.
      bytes.copy(this.#stage!, this.#fill, from, from + n)
      this.#fill += n
      from += n
      if (this.#fill === STAGE && !this.#ship()) return
    }
    if (this.#fill > this.#flushed) {
      this.#idle ??= setTimeout(() => this.#flushStage(), IDLE_MS).unref()
      this.#idle.refresh()
    }
  }

  /**
   * Copies onto `into` (which holds bytes from `offset`, read from the file) every byte in that
   * range still in memory: the stages in flight and the one being filled.
   */
  overlay(into: Buffer, offset: number): void {
    const stages: Flying[] = [...this.#flying]
    if (this.#stage !== undefined) stages.push({ at: this.#at, stage: this.#stage.subarray(0, this.#fill) })
    for (const { at, stage } of stages) {
      const from = Math.max(offset, at)
      const to = Math.min(offset + into.length, at + stage.length)
      if (from < to) stage.copy(into, from - offset, from - at, to - at)
    }
  }

  /**
   * Writes what the stage being filled holds to the file now, unless a stage is in flight (the
   * file would show a hole until it lands): a reader about to read the file gets every byte.
   */
  flush(): void {
    if (this.#flying.length === 0) this.#flushStage()
  }

  /** Resolves once no stage is in flight (the exit waits for it). */
  drained(): Promise<void> {
    if (this.#flying.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  /**
   * Writes what the stage being filled holds and gives it back; the direct descriptor closes once
   * nothing is in flight. `plain` must stay open until this returned.
   */
  close(): void {
    if (this.#closing) return
    this.#closing = true
    clearTimeout(this.#idle)
    this.#flushStage()
    if (this.#stage !== undefined) free.push(this.#stage)
    this.#stage = undefined
    if (this.#flying.length === 0) closeSync(this.#direct)
  }

  /** The full stage goes to the file: in flight when another stage is free (and the stream has few in flight), else now. */
  #ship(): boolean {
    const stage = this.#stage!
    const at = this.#at
    const next = this.#flying.length < MAX_FLYING ? takeStage() : undefined
    try {
      if (next === undefined) this.#check(writeSync(this.#direct, stage, 0, STAGE, at))
      else {
        this.#flying.push({ at, stage })
        this.#stage = next
        write(this.#direct, stage, 0, STAGE, at, (error, written) => this.#landed(stage, error, written))
      }
    } catch (error) {
      this.#error = error as Error
      return false
    }
    this.#at += STAGE
    this.#fill = 0
    this.#flushed = 0
    return true
  }

  #landed(stage: Buffer, error: Error | null, written: number): void {
    try {
      if (error) throw error
      this.#check(written)
    } catch (failure) {
      this.#error ??= failure as Error
    }
    this.#flying.splice(
      this.#flying.findIndex((flying) => flying.stage === stage),
      1,
    )
    free.push(stage)
    if (this.#flying.length > 0) return
    if (this.#closing) closeSync(this.#direct)
    for (const resolve of this.#waiting.splice(0)) resolve()
  }

  #check(written: number): void {
    if (written !== STAGE) throw new Error(`a short write to the spill file (${written} of ${STAGE} bytes)`)
  }

  /** What the stage holds and the file not yet, through the plain descriptor (no direct write is on that range). */
  #flushStage(): void {
    this.#idle = undefined
    const stage = this.#stage
    if (stage === undefined || this.#error || this.#fill === this.#flushed) return
    // Not past a stage still in flight: the file would show a hole where its bytes go.
    if (this.#flying.length > 0 && !this.#closing) {
      this.#idle = setTimeout(() => this.#flushStage(), IDLE_MS).unref()
      return
    }
    try {
      let at = this.#flushed
      while (at < this.#fill) at += writeSync(this.#plain, stage, at, this.#fill - at, this.#at + at)
      this.#flushed = at
    } catch (error) {
      this.#error = error as Error
    }
  }
}
