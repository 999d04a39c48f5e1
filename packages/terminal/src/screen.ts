import xterm from '@xterm/headless'
import type { KeyModes } from './keys.js'

/** Bytes handed to the emulator at once, at most, before more wait in the backlog. */
const PARSING_BOUND = 1024 * 1024

/** Bytes that make a batch handed to the emulator at once, and the quiet after which it is handed anyway. */
const BATCH_BYTES = 64 * 1024
const BATCH_MS = 30

/** The newest bytes of a backlog kept when the emulator falls behind; older ones are skipped. */
export const BACKLOG_KEPT = 256 * 1024

/** What a person would see on the terminal now. */
export interface ScreenSnapshot {
  /** The visible rows, top to bottom, each without its trailing blanks. */
  readonly rows: readonly string[]
  /** Where the cursor is, 0-based, on the visible rows. */
  readonly cursor: { readonly row: number; readonly column: number }
  /** The window title the program set (OSC 0 or 2), or empty. */
  readonly title: string
  /** Which screen shows: `alternate` while a full-screen program (`less`, `vim`, `top`) runs. */
  readonly buffer: 'normal' | 'alternate'
  readonly columns: number
  readonly height: number
}

/** How big a screen is, and how much of what scrolled off it keeps. */
export interface ScreenOptions {
  readonly columns: number
  readonly rows: number
  /** Lines kept above the visible ones. Default 1000. */
  readonly scrollback?: number
}

/**
 * The screen of one terminal, rendered by a headless terminal emulator (`@xterm/headless`, the
 * emulator of VS Code's terminal): the program's bytes go in as the terminal got them, and what a
 * person would see comes out, escape codes applied, cursor moves, the alternate screen, line
 * wrapping and the title included. Writes are parsed in order; `snapshot` waits for the ones made
 * before it.
 */
export class Screen {
  readonly #terminal: xterm.Terminal
  #title = ''
  /** Bytes handed to the emulator and not yet parsed. */
  #parsing = 0
  /** What waits while the emulator is behind, newest last, at most `BACKLOG_KEPT` bytes of it. */
  #backlog: Uint8Array[] = []
  #backlogBytes = 0
  /** Bytes of a flood never rendered, skipped to keep up (`skippedBytes`). */
  #skipped = 0
  /** The batch's timer, while bytes wait for it, and when the last write came. */
  #timer: NodeJS.Timeout | undefined
  #lastWrite = 0

  constructor(options: ScreenOptions) {
    this.#terminal = new xterm.Terminal({
      cols: options.columns,
      rows: options.rows,
      scrollback: options.scrollback ?? 1000,
      allowProposedApi: true,
    })
    this.#terminal.onTitleChange((title) => {
      this.#title = title
    })
  }

  /**
   * Feeds the terminal what the program wrote. Bytes are handed to the emulator in batches (once
   * 64 KiB wait, once the program was quiet for 30 ms, or when the screen
   * is read), so the emulator works while the program is idle, never between a keystroke and its
   * echo. A flood the emulator cannot
   * keep up with (`yes`) is held to the newest {@link BACKLOG_KEPT} bytes waiting: the screen
   * shows where the flood is, not every line it scrolled past, and memory stays bounded.
   */
  write(bytes: Uint8Array | string): void {
    const chunk = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes
    this.#backlog.push(chunk)
    this.#backlogBytes += chunk.length
    if (this.#parsing >= PARSING_BOUND) {
      while (this.#backlogBytes - this.#backlog[0]!.length >= BACKLOG_KEPT) {
        const dropped = this.#backlog.shift()!
        this.#backlogBytes -= dropped.length
        this.#skipped += dropped.length
      }
      return
    }
    this.#lastWrite = Date.now()
    if (this.#backlogBytes >= BATCH_BYTES) this.#flush()
    else if (this.#timer === undefined) this.#arm(BATCH_MS)
  }

  /** Flushes once the program was quiet for `BATCH_MS` (one timer, moved on while writes come). */
  #arm(ms: number): void {
    this.#timer = setTimeout(() => {
      const quiet = Date.now() - this.#lastWrite
      if (quiet < BATCH_MS) this.#arm(BATCH_MS - quiet)
      else this.#flush()
    }, ms)
    this.#timer.unref()
  }

  #parse(chunk: Uint8Array): void {
    this.#parsing += chunk.length
    this.#terminal.write(chunk, () => {
      this.#parsing -= chunk.length
      if (this.#parsing < PARSING_BOUND && this.#backlog.length > 0) this.#flush()
    })
  }

  /** Bytes of a flood skipped, never rendered, to keep up with it. */
  get skippedBytes(): number {
    return this.#skipped
  }

  /** The new size (as the terminal's was changed); what is shown stays, later output uses it. */
  resize(columns: number, rows: number): void {
    this.#flush()
    // In order: after what was written before, before what is written after (the emulator runs a
    // write's callback once it parsed that write, before it parses the next).
    this.#terminal.write('', () => this.#terminal.resize(columns, rows))
  }

  /** Hands the emulator what waits, so that what follows (a resize, a snapshot) comes after it. */
  #flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#backlog.length === 0) return
    const waiting = Buffer.concat(this.#backlog)
    this.#backlog = []
    this.#backlogBytes = 0
    this.#parse(waiting)
  }

  /** The modes a key's bytes depend on, as the program set them so far. */
  get modes(): KeyModes {
    return { applicationCursor: this.#terminal.modes.applicationCursorKeysMode }
  }

  /** The screen once every write before this call is rendered. */
  async snapshot(): Promise<ScreenSnapshot> {
    this.#flush()
    await new Promise<void>((resolve) => this.#terminal.write('', resolve))
    const terminal = this.#terminal
    const active = terminal.buffer.active
    const rows: string[] = []
    for (let row = 0; row < terminal.rows; row++) {
      rows.push(active.getLine(active.viewportY + row)?.translateToString(true) ?? '')
    }
    return {
      rows,
      cursor: { row: active.cursorY, column: active.cursorX },
      title: this.#title,
      buffer: active.type,
      columns: terminal.cols,
      height: terminal.rows,
    }
  }

  /** Frees the emulator. */
  dispose(): void {
    clearTimeout(this.#timer)
    this.#terminal.dispose()
  }
}

/** A snapshot as text a model reads: the rows, blank ones at the bottom dropped, and where the cursor is. */
export function screenText(snapshot: ScreenSnapshot): string {
  const rows = [...snapshot.rows]
  while (rows.length > 0 && rows.at(-1) === '') rows.pop()
  const head = `[screen ${snapshot.columns}x${snapshot.height}${snapshot.buffer === 'alternate' ? ', full-screen program' : ''}${snapshot.title ? `, title ${JSON.stringify(snapshot.title)}` : ''}; cursor at row ${snapshot.cursor.row + 1}, column ${snapshot.cursor.column + 1}]`
  return [head, ...rows].join('\n')
}
