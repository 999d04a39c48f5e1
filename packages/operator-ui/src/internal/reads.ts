import { open } from 'node:fs/promises'
import { eventValue } from '@toolvisor/answers'
import type { CapturedOutput, EventPage, ProcessOutputView } from '@toolvisor/process-runtime'

/** One event as the page shows it: its position and its JSON (cut past {@link EVENT_CHARS}). */
export interface EventLine {
  readonly seq: number
  readonly text: string
  /** The length of the whole JSON, when `text` is cut. */
  readonly cut?: number
}

/** A run of events, as the tail and the page-back read them. */
export interface EventRun {
  readonly events: readonly EventLine[]
  /** The position after the last event returned. */
  readonly next: number
  /** Events before the first returned that could not be read back. */
  readonly elided: number
  /** Events the process produced so far. */
  readonly total: number
}

/** A run of stderr bytes, decoded. */
export interface StderrRun {
  /** Where the bytes start (later than asked when what was asked for is no longer kept). */
  readonly from: number
  readonly text: string
  /** The position after the last byte returned. */
  readonly next: number
  /** stderr bytes the process wrote so far. */
  readonly total: number
}

/** The longest event text sent whole. */
const EVENT_CHARS = 16 * 1024
/** About how many characters of event text one run carries. */
const RUN_CHARS = 256 * 1024

/** Up to `max` events from position `from`, within {@link RUN_CHARS}. */
export function eventRun(output: Pick<ProcessOutputView, 'read'>, from: number, max: number): EventRun {
  return lines(output.read(from, max))
}

/** The lines of a page of events (the page's `next` moved back when the size bound cut it). */
export function lines(page: EventPage): EventRun {
  const events: EventLine[] = []
  let chars = 0
  let next = page.next
  for (const event of page.events) {
    if (events.length > 0 && chars > RUN_CHARS) {
      next = event.seq
      break
    }
    // A chunk is bytes: its text as the model gets it (base64 when not UTF-8), not a Buffer's JSON.
    const json = JSON.stringify(eventValue(event.value)) ?? 'null'
    const line =
      json.length > EVENT_CHARS
        ? { seq: event.seq, text: json.slice(0, EVENT_CHARS), cut: json.length }
        : { seq: event.seq, text: json }
    chars += line.text.length
    events.push(line)
  }
  return { events, next, elided: page.elided, total: page.total }
}

/**
 * Up to `max` bytes of stderr from byte `offset`: from the head kept in memory, the tail, or the
 * spill file that holds every byte once stderr outgrew the head. Bytes no longer kept anywhere (a
 * spill file that could not be written) are skipped: `from` then says where the text starts.
 */
export async function stderrRun(
  output: Pick<ProcessOutputView, 'stderr'>,
  offset: number,
  max: number,
): Promise<StderrRun> {
  const captured = output.stderr()
  const total = captured.totalBytes
  const bytes = whole(await stderrBytes(captured, Math.min(Math.max(0, offset), total), max), total)
  return { from: bytes.from, text: bytes.data.toString('utf8'), next: bytes.from + bytes.data.length, total }
}

/** Bytes cut to whole UTF-8 characters: a character split at either end is left to the next read. */
function whole(bytes: { from: number; data: Buffer }, total: number): { from: number; data: Buffer } {
  const { data } = bytes
  let start = 0
  // A continuation byte (10xxxxxx) at the start belongs to a character that began earlier.
  while (bytes.from > 0 && start < Math.min(3, data.length) && (data[start]! & 0xc0) === 0x80) start++
  let end = data.length
  if (bytes.from + end < total) {
    let lead = end - 1
    while (lead > start && end - lead < 4 && (data[lead]! & 0xc0) === 0x80) lead--
    const byte = data[lead] ?? 0
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    if (lead + size > end) end = lead
  }
  return { from: bytes.from + start, data: data.subarray(start, end) }
}

/** The bytes from memory when it holds them, else from the spill file (read without blocking). */
async function stderrBytes(
  captured: CapturedOutput,
  offset: number,
  max: number,
): Promise<{ from: number; data: Buffer }> {
  const total = captured.totalBytes
  const end = Math.min(total, offset + max)
  const { head, tail } = captured
  if (end <= head.length) return { from: offset, data: head.subarray(offset, end) }
  const tailStart = total - tail.length
  if (offset >= tailStart) return { from: offset, data: tail.subarray(offset - tailStart, end - tailStart) }
  if (captured.spillPath !== undefined) {
    const data = await readRange(captured.spillPath, offset, end - offset)
    if (data !== undefined) return { from: offset, data }
  }
  const from = Math.max(tailStart, offset)
  return { from, data: tail.subarray(from - tailStart, Math.max(from, end) - tailStart) }
}

async function readRange(path: string, offset: number, length: number): Promise<Buffer | undefined> {
  const file = await open(path, 'r').catch(() => undefined)
  if (file === undefined) return undefined
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(length), 0, length, offset)
    return buffer.subarray(0, bytesRead)
  } catch {
    return undefined
  } finally {
    await file.close()
  }
}
