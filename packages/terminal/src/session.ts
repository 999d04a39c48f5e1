import type { ManagedProcess, TerminalSize } from '@toolvisor/process-runtime'
import { TerminalError } from './errors.js'
import { type Keystroke, keystrokeBytes } from './keys.js'
import { Screen, type ScreenSnapshot } from './screen.js'

/** The most bytes one send may type (a paste of a file is not what a terminal is for). */
export const MAX_INPUT_BYTES = 64 * 1024

/** What a session replays onto a screen made after the program began: its newest bytes. */
const REPLAY_BYTES = 256 * 1024

/** Quiet this long after the last output (or the send) counts as settled, by default. */
export const QUIET_MS = 300

/** How a wait for output ended. */
export type Settled =
  /** The pattern showed up in the output since the wait began. */
  | 'pattern'
  /** No output for the quiet time. */
  | 'quiet'
  /** The program ended (its terminal closed). */
  | 'ended'
  /** The bound passed first. */
  | 'bound'
  /** The caller gave up (its signal). */
  | 'cancelled'

/** How long to wait for output, and for what. */
export interface SettleOptions {
  /** The most it waits, in ms. */
  readonly maxMs: number
  /** Quiet time that counts as settled, in ms (default {@link QUIET_MS}); absent with a pattern or a text: only that, the end or the bound. */
  readonly quietMs?: number
  /** Ends the wait when what the program shows (escape codes taken out) matches it. */
  readonly pattern?: RegExp
  /**
   * Ends the wait when this text shows, matched literally (what a model asks for: its pattern is
   * never run as a regular expression, which could take the event loop for good).
   */
  readonly text?: string
  readonly signal?: AbortSignal
}

const sessions = new WeakMap<ManagedProcess, TerminalSession>()

/**
 * A process on a terminal as a model drives it: keystrokes in (by name or as text, encoded as the
 * terminal's mode wants them), the screen a person would see out (`Screen`), and waits for the
 * program to answer. One per process, whoever asks (`TerminalSession.of`): the bash tools, the
 * `processes` tool and the operator page see the same screen.
 */
export class TerminalSession {
  readonly screen: Screen
  readonly #process: ManagedProcess
  /** Each new output wakes the waits. */
  readonly #waiters = new Set<(text: string) => void>()

  private constructor(process: ManagedProcess, size: TerminalSize) {
    this.#process = process
    this.screen = new Screen({ columns: size.columns, rows: size.rows })
    // What it showed before this session was made, its newest bytes: full-screen programs redraw,
    // and a line program's last lines are what a person would still see.
    const shown = process.output.counters().stdoutBytes
    const from = Math.max(0, shown - REPLAY_BYTES)
    if (shown > from) this.screen.write(process.output.bytes('stdout', from, shown - from))
    process.output.onEvent((event) => {
      const bytes = event.value as Uint8Array
      this.screen.write(bytes)
      if (this.#waiters.size === 0) return
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
      for (const waiter of this.#waiters) waiter(text)
    })
    void process.exit.then(() => {
      for (const waiter of this.#waiters) waiter('')
    })
  }

  /** The session of `process`, made on first ask; `TERMINAL_ERR_NOT_A_TERMINAL` for a process on pipes. */
  static of(process: ManagedProcess): TerminalSession {
    let session = sessions.get(process)
    if (session !== undefined) return session
    const terminal = process.terminal
    if (terminal === undefined) {
      throw new TerminalError(
        'TERMINAL_ERR_NOT_A_TERMINAL',
        `process ${process.id} (${process.tool}) does not run on a terminal: it takes no keystrokes and has no screen`,
      )
    }
    session = new TerminalSession(process, terminal.size)
    sessions.set(process, session)
    return session
  }

  /** The keystrokes' bytes, checked (key names, the size bound) before any is typed. */
  static encode(input: readonly Keystroke[], session?: TerminalSession): Buffer {
    const bytes = keystrokeBytes(input, session?.screen.modes ?? {})
    if (bytes.length > MAX_INPUT_BYTES) {
      throw new TerminalError(
        'TERMINAL_ERR_INPUT_TOO_LARGE',
        `the input is ${bytes.length} bytes; a send types at most ${MAX_INPUT_BYTES}: write a file and have the program read it instead`,
      )
    }
    return bytes
  }

  /** Types the keystrokes; rejects (`RUNTIME_ERR_STDIN_CLOSED`) once the terminal was hung up or the program ended. */
  async send(input: readonly Keystroke[]): Promise<number> {
    const bytes = TerminalSession.encode(input, this)
    if (bytes.length > 0) await this.#process.terminal!.type(bytes)
    return bytes.length
  }

  /** Resizes the terminal and the screen with it; the program gets SIGWINCH. */
  resize(size: TerminalSize): void {
    this.#process.terminal!.resize(size)
    this.screen.resize(size.columns, size.rows)
  }

  /** What a person would see now, once every byte shown so far is rendered. */
  snapshot(): Promise<ScreenSnapshot> {
    return this.screen.snapshot()
  }

  /**
   * Waits for the program to answer: until `pattern` (or `text`) shows in what it shows from now
   * on, it is quiet for `quietMs`, it ends, or `maxMs` passed.
   */
  settle(options: SettleOptions): Promise<Settled> {
    const process = this.#process
    const ended = () => process.lifecycle.status === 'exited' || process.lifecycle.status === 'failed'
    if (ended()) return Promise.resolve('ended')
    if (options.signal?.aborted) return Promise.resolve('cancelled')
    const match = matcher(options)
    const quietMs = match === undefined ? (options.quietMs ?? QUIET_MS) : options.quietMs
    return new Promise<Settled>((resolve) => {
      let seen = ''
      let quiet: NodeJS.Timeout | undefined
      const finish = (how: Settled) => {
        clearTimeout(bound)
        clearTimeout(quiet)
        this.#waiters.delete(waiter)
        options.signal?.removeEventListener('abort', cancelled)
        resolve(how)
      }
      const cancelled = () => finish('cancelled')
      const bound = setTimeout(() => finish('bound'), Math.max(0, options.maxMs))
      const rearm = () => {
        if (quietMs === undefined) return
        clearTimeout(quiet)
        quiet = setTimeout(() => finish('quiet'), quietMs)
      }
      const waiter = (text: string) => {
        if (ended()) return finish('ended')
        if (match !== undefined) {
          // Kept to its newest 64 KiB: a pattern is what the program shows last.
          seen = plainText(seen + text).slice(-65536)
          if (match(seen)) return finish('pattern')
        }
        rearm()
      }
      this.#waiters.add(waiter)
      options.signal?.addEventListener('abort', cancelled, { once: true })
      rearm()
    })
  }
}

/** What ends a wait on output: the pattern, or the literal text; undefined for neither. */
function matcher(options: SettleOptions): ((seen: string) => boolean) | undefined {
  const { pattern, text } = options
  if (pattern !== undefined) return (seen) => pattern.test(seen)
  if (text !== undefined && text.length > 0) return (seen) => seen.includes(text)
  return undefined
}

/** A terminal's escape sequences: CSI, OSC (ended by BEL or ST), and the two-byte ones. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding escape sequences is what this regex is for
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[0-~]|\r/g

/** Text without the terminal's escape sequences (CSI, OSC, the two-byte ones) and carriage returns. */
export function plainText(text: string): string {
  return text.replace(ESCAPES, '')
}
