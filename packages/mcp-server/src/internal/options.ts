import { z } from 'zod'
import { McpServerError } from '../errors.js'
import { MCP_DEFAULT_LIMITS } from '../limits.js'
import type { McpServerOptions } from '../server.js'

/** Every bound of a session, resolved. */
export type Limits = { -readonly [K in keyof typeof MCP_DEFAULT_LIMITS]: number }

/** An optional bound: an integer of `unit`, at least `min`. */
const bound = (unit: string, min = 1) => {
  const message = `must be ${min === 1 ? 'a positive' : 'a non-negative'} integer (${unit})`
  return z.number(message).int(message).min(min, message).optional()
}

const optionsSchema = z.object({
  name: z.string().min(1, 'must be a non-empty string (the server name MCP clients show)'),
  version: z.string().min(1, 'must be a non-empty string (the server version MCP clients show)'),
  sessionId: z
    .string()
    .min(1, 'must be a non-empty string when given (leave it out for a random one)')
    .optional(),
  log: z
    .custom<(line: string) => void>((v) => typeof v === 'function', 'must be a function (line) => void')
    .optional(),
  settleTimeoutMs: z.number().int().nonnegative().optional(),
  mailBytes: bound('bytes of mail a result holds; 0: never fold', 0),
  mailbox: z
    .custom<object>(
      (v) =>
        typeof v === 'object' && v !== null && typeof (v as { deliver?: unknown }).deliver === 'function',
      'must be a mailbox (createMailbox, or MailboxToken of a kernel)',
    )
    .optional(),
  maxMessageBytes: bound('bytes'),
  maxQueuedBytes: bound('bytes'),
  maxConcurrentCalls: bound('calls'),
  maxQueuedCalls: bound('calls', 0),
  progressPerSecond: bound('notifications a second'),
  progressBurst: bound('notifications'),
})

/**
 * Validates the options at the edge and resolves the bounds; the message names the field and what
 * to pass instead.
 */
export function parseOptions(where: string, options: McpServerOptions): Limits {
  const parsed = optionsSchema.safeParse(options)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = issue?.path.map(String).join('.') || '(options)'
    throw new McpServerError(
      'MCP_ERR_INVALID_OPTIONS',
      `${where}: options.${field}: ${issue?.message ?? 'invalid'}`,
    )
  }
  const limits: Limits = { ...MCP_DEFAULT_LIMITS }
  for (const key of Object.keys(limits) as (keyof Limits)[]) {
    const given = parsed.data[key]
    if (given !== undefined) limits[key] = given
  }
  return limits
}
