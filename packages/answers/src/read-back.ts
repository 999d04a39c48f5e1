import { token } from '@toolvisor/kernel'

/** What the model is told it can read back, in no tool's words: the tool that reads it words it. */
export type ReadBackRequest =
  /** A process's output (a task's, or a kept oneshot call's), from `offset`. */
  | {
      readonly command: 'output'
      readonly process: string
      readonly stream?: 'stdout' | 'stderr'
      readonly offset?: number
    }
  /** A task's new events (`read`: on from where the last read ended), its status, its stop. */
  | { readonly command: 'read' | 'status' | 'stop'; readonly process: string }
  /** A task's events from `offset`. */
  | { readonly command: 'page'; readonly process: string; readonly offset: number }
  /** The session's tasks. */
  | { readonly command: 'list' }
  /** The session's mail, waiting `timeout_seconds` at most (absent: the tool's default). */
  | { readonly command: 'wait'; readonly timeout_seconds?: number }

/**
 * How an answer tells the model to read back what it left out: the calls of the tool that reads
 * tasks, kept output and mail (`@toolvisor/tool-processes` provides it for its `processes` tool).
 * Without a provider no answer names a tool that does not exist: it says what was left out, not
 * how to read it.
 */
export interface ReadBack {
  /** The call as the model writes it: `processes {"command":"read","process":"t1"}`. */
  call(request: ReadBackRequest): string
  /** Its arguments alone, for a sentence that named the tool already: `{"command":"stop","process":"t1"}`. */
  args(request: ReadBackRequest): string
}

/** The `read-back` token: the words of the calls that read back what an answer left out. */
export const ReadBackToken = token<ReadBack>('read-back')

/** What the toolbox asks for a `ReadBack` at the moment it writes an answer (its provider may come later). */
export type ReadBackOf = () => ReadBack | undefined
