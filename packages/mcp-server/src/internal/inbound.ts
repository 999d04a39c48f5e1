import {
  type JSONRPCMessage,
  ProtocolErrorCode,
  type StandardSchemaV1,
  specTypeSchemas,
} from '@modelcontextprotocol/server'
import type { Line } from './line-reader.js'
import { recoverId } from './recover-id.js'

// What the SDK cannot take (its schemas refuse the whole message, and nothing answers) is sorted
// here first, as JSON-RPC 2.0 says: every request that has an id gets an answer, with that id when it
// was read exactly, else `id: null`; a notification never does.

/** A JSON-RPC error answer; `id` is null when the request's id could not be determined. */
export interface ErrorAnswer {
  readonly jsonrpc: '2.0'
  readonly id: string | number | null
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown }
}

/** What to do with one line from the client. */
export type Inbound =
  | { readonly kind: 'message'; readonly message: JSONRPCMessage; readonly note?: string }
  | { readonly kind: 'answer'; readonly answers: readonly ErrorAnswer[] }
  | { readonly kind: 'ignore'; readonly why: string }

type Json = Record<string, unknown>
type Id = string | number | null

const REQUEST_MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params'])
const BATCH = 'batches (JSON arrays) are not supported (MCP 2025-06-18); send one message per line'

/** Sorts one line from the client: a message for the SDK, errors to answer, or nothing. */
export function inspect(line: Line, maxMessageBytes: number): Inbound {
  if (line.kind === 'oversized') {
    const { bytes } = line
    return answer(
      recoverId(line.head, line.tail),
      `the message is ${bytes} bytes, over the limit of ${maxMessageBytes} bytes (maxMessageBytes); it was discarded unread`,
      { bytes, maxMessageBytes },
    )
  }
  if (line.text.trim() === '') return { kind: 'ignore', why: '' }
  let value: unknown
  try {
    value = JSON.parse(line.text)
  } catch {
    const error = { code: ProtocolErrorCode.ParseError, message: 'Parse error: the line is not valid JSON' }
    return { kind: 'answer', answers: [{ jsonrpc: '2.0', id: null, error }] }
  }
  if (Array.isArray(value)) return batch(value)
  if (!isObject(value)) return answer(null, `a message is a JSON object; got ${kindOf(value)}`)
  if ('method' in value) {
    return 'id' in value ? request(value) : notification(value)
  }
  if ('result' in value || 'error' in value) return response(value)
  return answer(
    usableId(value.id),
    'a message needs a method (a request or a notification) or a result or an error (a response)',
  )
}

function request(value: Json): Inbound {
  const id = value.id
  if (!isRequestId(id)) {
    return answer(echoed(id), `the id must be a string or an integer (MCP); got ${describe(id)}`)
  }
  const wrong = envelope(value)
  if (wrong !== undefined) return answer(id, wrong)
  const extra = Object.keys(value).find((key) => !REQUEST_MEMBERS.has(key))
  if (extra !== undefined) return answer(id, `$.${cut(extra)}: not a member of a JSON-RPC request`)
  const { message, token } = withoutBadToken(value)
  const parsed = validate(specTypeSchemas.JSONRPCRequest, message)
  if ('issues' in parsed) {
    const issue = parsed.issues[0]
    return answer(id, `${pathOf(issue)}: ${cut(issue?.message ?? '')}`)
  }
  if (token === undefined) return { kind: 'message', message: parsed.value }
  return {
    kind: 'message',
    message: parsed.value,
    note: `request ${cut(JSON.stringify(id))}: ignored _meta.progressToken ${describe(token)} (a progress token is a string or an integer); the call runs without progress`,
  }
}

function notification(value: Json): Inbound {
  const wrong = envelope(value)
  if (wrong !== undefined) return answer(null, wrong)
  const parsed = validate(specTypeSchemas.JSONRPCNotification, withoutBadToken(value).message)
  if ('value' in parsed) return { kind: 'message', message: parsed.value }
  return {
    kind: 'ignore',
    why: `notification ${cut(String(value.method))}: ${cut(described(parsed.issues))}`,
  }
}

function response(value: Json): Inbound {
  const parsed = validate(specTypeSchemas.JSONRPCResponse, value)
  if ('value' in parsed) return { kind: 'message', message: parsed.value }
  return { kind: 'ignore', why: `a response the server cannot use: ${cut(described(parsed.issues))}` }
}

/** The SDK's own schema of a message, run synchronously (its schemas have no async parts). */
function validate<T extends JSONRPCMessage>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): { readonly value: T } | { readonly issues: readonly StandardSchemaV1.Issue[] } {
  const result = schema['~standard'].validate(value) as StandardSchemaV1.Result<T>
  return result.issues === undefined ? { value: result.value } : { issues: result.issues }
}

/** Where an issue is, as a JSON path from the message (`$.params.name`). */
function pathOf(issue: StandardSchemaV1.Issue | undefined): string {
  const keys = (issue?.path ?? []).map((key) => (typeof key === 'object' ? key.key : key))
  return ['$', ...keys.map(String)].join('.')
}

/** Every issue, each with its path, for a log line. */
function described(issues: readonly StandardSchemaV1.Issue[]): string {
  return issues.map((issue) => `${pathOf(issue)}: ${issue.message}`).join('; ')
}

/** One answer per element that has a usable id, so no request of a batch waits forever. */
function batch(values: readonly unknown[]): Inbound {
  const ids = values.filter(isObject).map((v) => usableId(v.id))
  const answered = ids.filter((id) => id !== null)
  const answers = (answered.length > 0 ? answered : [null]).map((id) => errorAnswer(id, BATCH))
  return { kind: 'answer', answers }
}

/** What is wrong with the members every message shares, if anything. */
function envelope(value: Json): string | undefined {
  if (value.jsonrpc !== '2.0') return '$.jsonrpc: must be "2.0"'
  if (typeof value.method !== 'string') return '$.method: must be a string'
  if (value.params !== undefined && !isObject(value.params)) return '$.params: must be an object'
  return undefined
}

/** The message without a `_meta.progressToken` MCP does not allow, and that token. */
function withoutBadToken(value: Json): { message: Json; token?: unknown } {
  const params = value.params as Json | undefined
  const meta = params?._meta
  if (!isObject(meta) || !('progressToken' in meta) || isRequestId(meta.progressToken))
    return { message: value }
  const { progressToken, ...rest } = meta
  return { message: { ...value, params: { ...params, _meta: rest } }, token: progressToken }
}

function answer(id: Id, message: string, data?: unknown): Inbound {
  return { kind: 'answer', answers: [errorAnswer(id, message, data)] }
}

function errorAnswer(id: Id, message: string, data?: unknown): ErrorAnswer {
  const error = { code: ProtocolErrorCode.InvalidRequest, message: `Invalid Request: ${message}` }
  return { jsonrpc: '2.0', id, error: data === undefined ? error : { ...error, data } }
}

/** MCP ids (and progress tokens): a string or an integer JSON carries exactly. */
function isRequestId(value: unknown): value is string | number {
  return typeof value === 'string' || Number.isSafeInteger(value)
}

/** The id to answer with: the request's when it is a valid one, else null. */
function usableId(value: unknown): Id {
  return isRequestId(value) ? value : null
}

/**
 * An id MCP refuses, as the answer carries it: JSON-RPC 2.0 allows a number with a fraction (and
 * null), so it was determined and goes back as sent; an object, an array, a boolean is no id at all,
 * and an integer past 2^53 - 1 was not read exactly: `null`.
 */
function echoed(value: unknown): Id {
  return typeof value === 'number' && !Number.isInteger(value) ? value : null
}

/** An id or a token as an answer quotes it: a number or null as is, anything else by its kind. */
function describe(value: unknown): string {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return `${value}, beyond 2^53 - 1, where JSON numbers stop being exact`
  }
  if (typeof value === 'number' || value === null) return String(value)
  return kindOf(value)
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Client text quoted in an answer or a log line: a short prefix, never the whole input. */
function cut(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`
}
