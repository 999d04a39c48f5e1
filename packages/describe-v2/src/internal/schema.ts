/**
 * The zod schemas of describe documents: shapes, types, enums and per-field rules. What spans
 * several fields (unique names, compiled schemas and regexes, `cancel.send` against
 * `input.event`) is checked after parsing, in `parse.ts`. Unknown keys are stripped everywhere.
 */
import { posix } from 'node:path'
import { z } from 'zod'
import { limitsSchema } from '../limits.js'
import { argumentNameProblem, MAX_NAME_LENGTH, NAME_PATTERN } from '../naming.js'
import type { CancelSpec, JsonSchema } from '../types.js'
import { isPlainObject, show } from './text.js'

function refined(problem: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const message = problem(value)
    if (message !== undefined) ctx.addIssue({ code: 'custom', message, input: value })
  })
}

function nameProblem(what: string) {
  return (value: string): string | undefined => {
    if (value.length > MAX_NAME_LENGTH) {
      return `expected at most ${MAX_NAME_LENGTH} characters; got ${show(value)} (${value.length} characters)`
    }
    if (!NAME_PATTERN.test(value)) {
      return `expected 1 to ${MAX_NAME_LENGTH} letters, digits, "_" or "-" (${what}); got ${show(value)}`
    }
    return undefined
  }
}

const slug = refined(nameProblem('"." is reserved for slug.command'))
const commandName = refined(nameProblem('the command becomes the tool slug.name'))

const argName = refined((value) => {
  const problem = argumentNameProblem(value)
  return problem === undefined ? undefined : `${problem}; got ${show(value)}`
})

/** One argument object of protocol 1: all six fields required. */
const v1Arg = z.object({
  name: argName,
  description: z.string(),
  type: z.string(),
  backing_type: z.string(),
  arity: z.enum(['single', 'optional']),
  mode: z.enum(['positional', 'dashdashspace', 'dashdashequal', 'stdin', 'env']),
})

/**
 * One argument object of protocol 2: the six fields, and `allow_dash`. A value that starts with
 * `-` passed as `positional` or `dashdashspace` lands in argv where the tool's parser may read it
 * as an option (`--help`, `-rf`, `--output=x`), so it is refused unless the tool declares
 * `"allow_dash": true` (its parser takes such a word as a value). Ignored, with a warning, in a
 * protocol 1 document: v1 tools never have it, and get the refusal.
 */
const v2Arg = v1Arg.extend({ allow_dash: z.boolean().optional() })

/** An argument object as parsed (`allow_dash` only ever set under protocol 2). */
export type RawArg = z.output<typeof v2Arg>

const emptyResult = z.discriminatedUnion('tag', [
  z.object({ tag: z.literal('DoNothing') }),
  z.object({ tag: z.literal('AddMessage'), contents: z.string() }),
])

/** The v1 document: what every protocol shares. */
export const v1Document = z.object({
  slug,
  description: z.string(),
  args: z.array(v1Arg),
  'empty-result': emptyResult.optional(),
})

const jsonSchema = z.custom<JsonSchema>((value) => typeof value === 'boolean' || isPlainObject(value), {
  error: (issue) => `expected a JSON Schema (an object or a boolean); got ${show(issue.input)}`,
})

const processSchema = z.object({
  mode: z.enum(['oneshot', 'stream', 'service']).optional(),
  output: z
    .object({
      framing: z.enum(['jsonl', 'lines', 'chunks']).optional(),
      event: jsonSchema.optional(),
    })
    .optional(),
  input: z
    .object({
      framing: z.enum(['jsonl', 'lines']).optional(),
      event: jsonSchema.optional(),
    })
    .optional(),
  digest: z
    .discriminatedUnion('per', [
      z.object({ per: z.literal('round') }),
      z.object({ per: z.literal('events'), n: z.number().int().min(1) }),
      z.object({ per: z.literal('seconds'), n: z.number().positive() }),
    ])
    .optional(),
  ready: z
    .discriminatedUnion('kind', [
      z.object({ kind: z.literal('line'), match: z.string() }),
      z.object({ kind: z.literal('exit') }),
      z.object({ kind: z.literal('immediate') }),
    ])
    .optional(),
  terminal: z
    .union([
      z.literal(true),
      z.object({
        columns: z.number().int().min(1).max(65535).optional(),
        rows: z.number().int().min(1).max(65535).optional(),
      }),
    ])
    .optional(),
})

const noNul = (value: string): boolean => !value.includes('\0')

const sandboxPath = refined((value) =>
  value.length > 0 && noNul(value) ? undefined : `expected a non-empty path without NUL; got ${show(value)}`,
)

const envdir = refined((value) =>
  value.length > 0 && noNul(value) && !value.includes('/') && value !== '.' && value !== '..'
    ? undefined
    : `expected one directory name under the operator's --envdir-root (no "/", not "." or ".."); got ${show(value)}`,
)

const rundir = refined((value) => {
  if (!noNul(value)) return `expected a path without NUL; got ${show(value)}`
  if (posix.isAbsolute(value)) return `expected a path relative to the tool's directory; got ${show(value)}`
  const normal = posix.normalize(value)
  if (normal === '..' || normal.startsWith('../')) {
    return `expected a path inside the tool's directory; got ${show(value)}, which leaves it through ".."`
  }
  return undefined
})

/** `environment`: names without `=` or NUL, string values; built with own keys (even `__proto__`). */
const environment = z.unknown().transform((value, ctx): Record<string, string> => {
  if (!isPlainObject(value)) {
    ctx.addIssue({
      code: 'custom',
      message: `expected an object of strings; got ${show(value)}`,
      input: value,
    })
    return z.NEVER
  }
  const entries: [string, string][] = []
  for (const [name, text] of Object.entries(value)) {
    if (name.length === 0 || name.includes('=') || !noNul(name)) {
      const message = `expected a variable name without "=" or NUL; got ${show(name)}`
      ctx.addIssue({ code: 'custom', message, path: [name], input: name })
    } else if (typeof text !== 'string') {
      ctx.addIssue({
        code: 'custom',
        message: `expected a string; got ${show(text)}`,
        path: [name],
        input: text,
      })
    } else if (!noNul(text)) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a value without NUL; got ${show(text)}`,
        path: [name],
        input: text,
      })
    } else entries.push([name, text])
  }
  return Object.fromEntries(entries)
})

const cancel = z.unknown().transform((value, ctx): CancelSpec => {
  if (value === 'SIGTERM' || value === 'SIGINT') return { signal: value }
  if (isPlainObject(value) && Object.hasOwn(value, 'send')) return { send: value.send }
  const message = `expected "SIGTERM", "SIGINT" or {"send": EVENT}; got ${show(value)}`
  ctx.addIssue({ code: 'custom', message, input: value })
  return z.NEVER
})

const nonEmpty = z.string().min(1)

/** Whether `value` holds a C0 control character or DEL. */
function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/** An entry of a network list: its shape only; the runtime's network gates parse it at load. */
const netEntry = refined((value) =>
  value.length > 0 && value.length <= 261 && !/\s/.test(value) && !hasControl(value)
    ? undefined
    : `expected a name, "*.name" or an address, with an optional ":port" (no spaces, at most 261 characters); got ${show(value)}`,
)

const netList = z
  .object({
    allow: z.array(netEntry).max(256).optional(),
    deny: z.array(netEntry).max(256).optional(),
    publish: z.array(z.number().int().min(1).max(65535)).max(32).optional(),
  })
  .strict()

/** `net`: `host`, `none`, or an allow list through toolvisor's proxy (issue 32). */
const net = z.unknown().transform((value, ctx): 'host' | 'none' | z.infer<typeof netList> => {
  if (value === 'host' || value === 'none') return value
  if (isPlainObject(value)) {
    const list = netList.safeParse(value)
    if (list.success) return list.data
    for (const issue of list.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: issue.path })
    return z.NEVER
  }
  const message = `expected one of host, none, or an allow list {"allow": [...], "deny": [...], "publish": [...]}; got ${show(value)}`
  ctx.addIssue({ code: 'custom', message, input: value })
  return z.NEVER
})

const runtimeSchema = z.object({
  run_as: z.object({ user: nonEmpty, group: nonEmpty.optional() }).optional(),
  sandbox: z
    .object({
      fs: z
        .object({ read: z.array(sandboxPath).optional(), write: z.array(sandboxPath).optional() })
        .optional(),
      net: net.optional(),
      tmp: z.enum(['shared', 'private']).optional(),
    })
    .optional(),
  envdir: envdir.optional(),
  environment: environment.optional(),
  rundir: rundir.optional(),
  timeout: z
    .object({
      start: z.number().positive().optional(),
      stop: z.number().nonnegative().optional(),
      idle: z.number().positive().nullable().optional(),
    })
    .optional(),
  on_exit: z.enum(['report', 'restart', 'fail']).optional(),
  cancel: cancel.optional(),
  limits: limitsSchema().optional(),
})

const command = z.object({ name: commandName, description: z.string(), args: z.array(v2Arg) })

/** The v2 document: v1 (with `allow_dash` on arguments) plus `check`, `help`, `commands`, `process` and `runtime`. */
export const v2Document = v1Document.extend({
  args: z.array(v2Arg),
  check: z.boolean().optional(),
  help: z.boolean().optional(),
  commands: z.array(command).optional(),
  process: processSchema.optional(),
  runtime: runtimeSchema.optional(),
})

/** A v1 document as parsed. */
export type V1Document = z.output<typeof v1Document>
/** A v2 document as parsed. */
export type V2Document = z.output<typeof v2Document>
