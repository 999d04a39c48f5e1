import xterm from '@xterm/headless'
import type { KeyModes } from './keys.js'

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
  #pending: Promise<void> = Promise.resolve()

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

  /** Feeds the terminal what the program wrote. */
  write(bytes: Uint8Array | string): void {
    const terminal = this.#terminal
    this.#pending = this.#pending.then(() => new Promise<void>((resolve) => terminal.write(bytes, resolve)))
  }

  /** The new size (as the terminal's was changed); what is shown stays, later output uses it. */
  resize(columns: number, rows: number): void {
    const terminal = this.#terminal
    this.#pending = this.#pending.then(() => terminal.resize(columns, rows))
  }

  /** The modes a key's bytes depend on, as the program set them so far. */
  get modes(): KeyModes {
    return { applicationCursor: this.#terminal.modes.applicationCursorKeysMode }
  }

  /** The screen once every write before this call is rendered. */
  async snapshot(): Promise<ScreenSnapshot> {
    await this.#pending
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
