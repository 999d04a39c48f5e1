import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs'
import { join } from 'node:path'
import {
  createMemoryStore,
  type Envelope,
  type MailStore,
  type MemoryStore,
  type StoreSnapshot,
} from '@toolvisor/mailbox'
import { JournalError } from './errors.js'

/** One line of the journal. */
type Entry =
  | { readonly op: 'snapshot'; readonly state: StoreSnapshot }
  | { readonly op: 'append'; readonly session: string; readonly envelope: Envelope; readonly key?: string }
  | {
      readonly op: 'fold'
      readonly session: string
      readonly seqs: readonly number[]
      readonly digest: Envelope
    }
  | { readonly op: 'remove'; readonly session: string; readonly seqs: readonly number[] }
  | { readonly op: 'trim'; readonly session: string; readonly through: number }
  | { readonly op: 'cursor'; readonly session: string; readonly reader: string; readonly seq: number }
  | { readonly op: 'drop'; readonly session: string }

/** How a journal store is opened. */
export interface JournalOptions {
  /** The directory of the journal (`mail.journal` in it), made 0700 if missing. */
  readonly dir: string
  /** Past this size the journal is rewritten as one snapshot. Default 64 MiB. */
  readonly compactBytes?: number
}

/** What opening found: records that could not be read back. */
export interface Recovery {
  /** Bytes of a last record torn by a crash, cut off. */
  readonly tornBytes: number
  /** Records in the middle that could not be parsed, skipped (line numbers). */
  readonly skippedLines: readonly number[]
}

/** The durable store, and what it found when it opened. */
export interface JournalStore extends MailStore {
  readonly path: string
  readonly recovery: Recovery
  /** Rewrites the journal as one snapshot (also done past `compactBytes`). */
  compact(): void
  /** Flushes and closes the journal. */
  close(): void
}

const FILE = 'mail.journal'

/**
 * A mailbox store that survives the process: every change is one JSON line appended to
 * `<dir>/mail.journal` with a synchronous write (so a kill -9 at any moment loses nothing the
 * mailbox accepted), fsynced at each cursor move (a delivery: mail delivered is never delivered
 * again, even after a power loss) and at a drop; at open the journal is replayed into memory,
 * where every read is served. Past `compactBytes` it is rewritten as one snapshot, atomically
 * (write, fsync, rename). No native module: it installs anywhere Node 20 runs.
 */
export function openJournalStore(options: JournalOptions): JournalStore {
  mkdirSync(options.dir, { recursive: true, mode: 0o700 })
  const path = join(options.dir, FILE)
  const { memory, recovery, goodBytes } = replay(path)
  const fd = openSync(path, 'a+', 0o600)
  if (fstatSync(fd).size > goodBytes) ftruncateSync(fd, goodBytes)
  return new Journal(path, fd, memory, recovery, options.compactBytes ?? 64 * 1024 * 1024)
}

class Journal implements JournalStore {
  readonly path: string
  readonly recovery: Recovery
  #fd: number | undefined
  #memory: MemoryStore
  #bytes: number
  readonly #compactBytes: number

  constructor(path: string, fd: number, memory: MemoryStore, recovery: Recovery, compactBytes: number) {
    this.path = path
    this.#fd = fd
    this.#memory = memory
    this.recovery = recovery
    this.#bytes = fstatSync(fd).size
    this.#compactBytes = compactBytes
  }

  sessions(): readonly string[] {
    return this.#memory.sessions()
  }
  seqOf(session: string, id: string): number | undefined {
    return this.#memory.seqOf(session, id)
  }
  lastKeyed(session: string, prefix: string): number {
    return this.#memory.lastKeyed(session, prefix)
  }
  read(session: string, after: number, max: number): readonly Envelope[] {
    return this.#memory.read(session, after, max)
  }
  lastSeq(session: string): number {
    return this.#memory.lastSeq(session)
  }
  cursor(session: string, reader: string): number {
    return this.#memory.cursor(session, reader)
  }

  append(session: string, envelope: Envelope, key?: string): void {
    this.#write({ op: 'append', session, envelope, ...(key !== undefined ? { key } : {}) })
    this.#memory.append(session, envelope, key)
    this.#compactIfLarge()
  }
  fold(session: string, seqs: readonly number[], digest: Envelope): void {
    this.#write({ op: 'fold', session, seqs, digest })
    this.#memory.fold(session, seqs, digest)
    this.#compactIfLarge()
  }
  remove(session: string, seqs: readonly number[]): void {
    this.#write({ op: 'remove', session, seqs })
    this.#memory.remove(session, seqs)
    this.#compactIfLarge()
  }
  trim(session: string, through: number): void {
    this.#write({ op: 'trim', session, through })
    this.#memory.trim(session, through)
    this.#compactIfLarge()
  }
  setCursor(session: string, reader: string, seq: number): void {
    this.#write({ op: 'cursor', session, reader, seq }, true)
    this.#memory.setCursor(session, reader, seq)
    this.#compactIfLarge()
  }
  drop(session: string): void {
    this.#write({ op: 'drop', session }, true)
    this.#memory.drop(session)
    this.#compactIfLarge()
  }

  compact(): void {
    const fd = this.#open()
    const tmp = `${this.path}.tmp`
    const out = openSync(tmp, 'w', 0o600)
    try {
      writeAll(out, `${JSON.stringify({ op: 'snapshot', state: this.#memory.snapshot() })}\n`)
      fsyncSync(out)
    } finally {
      closeSync(out)
    }
    renameSync(tmp, this.path)
    closeSync(fd)
    this.#fd = openSync(this.path, 'a+', 0o600)
    this.#bytes = fstatSync(this.#fd).size
  }

  close(): void {
    if (this.#fd === undefined) return
    fsyncSync(this.#fd)
    closeSync(this.#fd)
    this.#fd = undefined
  }

  /** Appends one record before memory changes: what memory holds is always on disk. */
  #write(entry: Entry, sync = false): void {
    const fd = this.#open()
    const line = `${JSON.stringify(entry)}\n`
    this.#bytes += writeAll(fd, line)
    if (sync) fsyncSync(fd)
  }

  /** After memory took the change the journal holds: a snapshot then holds it too. */
  #compactIfLarge(): void {
    if (this.#bytes > this.#compactBytes) this.compact()
  }

  #open(): number {
    if (this.#fd === undefined)
      throw new JournalError('JOURNAL_ERR_CLOSED', `the mail journal ${this.path} is closed`)
    return this.#fd
  }
}

/** Writes every byte of `text`; returns how many. */
function writeAll(fd: number, text: string): number {
  const bytes = Buffer.from(text, 'utf8')
  let written = 0
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written)
  return bytes.length
}

/** Rebuilds the store from the journal; a torn last record is cut, a bad one elsewhere skipped. */
function replay(path: string): { memory: MemoryStore; recovery: Recovery; goodBytes: number } {
  let text = ''
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new JournalError(
        'JOURNAL_ERR_UNREADABLE',
        `the mail journal ${path} cannot be read: ${(error as Error).message}`,
      )
    }
  }
  let memory = createMemoryStore()
  const skippedLines: number[] = []
  const complete = text.lastIndexOf('\n') + 1
  const lines = text.slice(0, complete).split('\n').slice(0, -1)
  lines.forEach((line, index) => {
    let entry: Entry
    try {
      entry = JSON.parse(line) as Entry
    } catch {
      skippedLines.push(index + 1)
      return
    }
    if (entry.op === 'snapshot') memory = createMemoryStore(entry.state)
    else apply(memory, entry)
  })
  const tornBytes = Buffer.byteLength(text.slice(complete), 'utf8')
  return {
    memory,
    recovery: { tornBytes, skippedLines },
    goodBytes: Buffer.byteLength(text, 'utf8') - tornBytes,
  }
}

function apply(memory: MailStore, entry: Exclude<Entry, { op: 'snapshot' }>): void {
  if (entry.op === 'append') memory.append(entry.session, entry.envelope, entry.key)
  else if (entry.op === 'fold') memory.fold(entry.session, entry.seqs, entry.digest)
  else if (entry.op === 'remove') memory.remove(entry.session, entry.seqs)
  else if (entry.op === 'trim') memory.trim(entry.session, entry.through)
  else if (entry.op === 'cursor') memory.setCursor(entry.session, entry.reader, entry.seq)
  else memory.drop(entry.session)
}
