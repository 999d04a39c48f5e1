import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Line } from './line-reader.js'
import { recoverId } from './recover-id.js'

/** A JSON-RPC error answer; `id` is null when the request's id could not be determined. */
export interface ErrorAnswer {
  readonly jsonrpc: '2.0'
  readonly id: string | number | null
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

/** What to do with one line from the client. */
export type Inbound =
  | { readonly kind: 'message'; readonly message: JSONRPCMessage }
  | { readonly kind: 'answer'; readonly answer: ErrorAnswer }
  | { readonly kind: 'ignore'; readonly why: string }

/** Sorts one line from the client: a message for the SDK, an error to answer, or nothing. */
export function inspect(line: Line, maxMessageBytes: number): Inbound {
  if (line.kind === 'oversized') return oversized(line, maxMessageBytes)
  if (line.text.trim() === '') return { kind: 'ignore', why: '' }
  let value: unknown
  try {
    value = JSON.parse(line.text)
  } catch (error) {
    return { kind: 'ignore', why: `not JSON: ${(error as Error).message}` }
  }
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (parsed.success) return { kind: 'message', message: parsed.data }
  return { kind: 'ignore', why: `not a JSON-RPC message: ${parsed.error.message}` }
}

function oversized(line: Extract<Line, { kind: 'oversized' }>, maxMessageBytes: number): Inbound {
  return {
    kind: 'answer',
    answer: {
      jsonrpc: '2.0',
      id: recoverId(line.head, line.tail),
      error: {
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: the message is ${line.bytes} bytes, over the limit of ${maxMessageBytes} bytes (maxMessageBytes); it was discarded unread`,
        data: { bytes: line.bytes, maxMessageBytes },
      },
    },
  }
}
