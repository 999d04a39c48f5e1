/**
 * A process's output, bounded: what it writes to stdout is framed and decoded into events kept in
 * a ring, what it writes to stderr into lines; both streams keep their first bytes and their last in
 * memory and spill past that to files a reader can come back to (decisions 0083, 0084, 0092).
 * `@toolvisor/process-runtime` makes one per process and hands it out as `ManagedProcess.output`.
 */
export type { DecodeSink, EventValue, InvalidEvent } from './internal/decode.js'
export { isInvalidEvent } from './internal/decode.js'
export type { EventPage, SequencedEvent } from './internal/event-log.js'
export type { OutputBounds, OutputOptions } from './process-output.js'
export { bulkStdout, ProcessOutput } from './process-output.js'
export type { SpillStages } from './stages.js'
export type { StreamBytes, StreamRange } from './stream-bytes.js'
export { endOf, newestBytes } from './stream-bytes.js'
export type { CapturedOutput, ProcessCounters, ProcessOutputView } from './view.js'
