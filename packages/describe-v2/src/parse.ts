import { dirname } from 'node:path'
import type { z } from 'zod'
import { DescribeErrorCodes } from './errors.js'
import { defaultEventSchemaCompiler } from './event-schema.js'
import { argSpecs } from './internal/args.js'
import { commandsOf } from './internal/commands.js'
import { readDocument } from './internal/decode.js'
import { firstIssueReason } from './internal/issues.js'
import type { Load } from './internal/load.js'
import { fail } from './internal/load.js'
import { processOf, v1Process } from './internal/process.js'
import { defaultRuntime, runtimeOf } from './internal/runtime.js'
import type { V1Document } from './internal/schema.js'
import { v1Document, v2Document } from './internal/schema.js'
import type { EventSchemaCompiler } from './internal/schema-compiler.js'
import { isPlainObject, jsonPath, listed, show } from './internal/text.js'
import { unknownKeyWarnings } from './internal/unknown-keys.js'
import type { ArgSpec, CommandSpec, EmptyResult, ToolSpec } from './types.js'

/**
 * Runs a zod schema; the first issue (and the others, listed) is the INVALID_FIELD error. The
 * warnings so far are likely typos (`backing-type`): they often explain a missing field, so they
 * go into the error too.
 */
function check<T extends z.ZodType>(schema: T, document: unknown, load: Load): z.output<T> {
  const result = schema.safeParse(document, { reportInput: true })
  if (result.success) return result.data
  const { issues } = result.error
  const field = jsonPath(issues[0]?.path ?? [])
  const typos = load.warnings.length > 0 ? `; also ${listed(load.warnings)}` : ''
  return fail(load, DescribeErrorCodes.INVALID_FIELD, field, firstIssueReason(issues) + typos, result.error)
}

function emptyResultOf(raw: V1Document['empty-result']): { emptyResult?: EmptyResult } {
  if (raw === undefined) return {}
  return {
    emptyResult:
      raw.tag === 'AddMessage' ? { tag: 'AddMessage', contents: raw.contents } : { tag: 'DoNothing' },
  }
}

/** The protocol a document declares: 1 when the field is absent, else 1 or 2 exactly. */
function protocolOf(document: Record<string, unknown>, load: Load): 1 | 2 {
  const protocol = Object.hasOwn(document, 'protocol') ? document.protocol : 1
  if (protocol === 1 || protocol === 2) return protocol
  const reason = `expected 1 or 2 (no protocol field means 1); got ${show(protocol)}`
  return fail(load, DescribeErrorCodes.UNSUPPORTED_PROTOCOL, '$.protocol', reason)
}

/**
 * Parses what `TOOL describe` printed into a {@link ToolSpec}, with every default applied: v1
 * documents (no `protocol`, or `1`; v2 fields are ignored) and v2 documents (`"protocol": 2`).
 * Declared event schemas and `ready.match` are compiled here, once (by the compiler of the
 * convenience exports; a kernel's describe service parses with its own). Likely typos of spec keys
 * (`proccess`) and protocol 2 fields in a v1 document are load warnings.
 *
 * @param stdout - the bytes (or text) `describe` wrote on stdout
 * @param toolPath - the absolute path of the executable; `dir` is its directory
 * @throws LoadingError, and nothing else, whatever the bytes: `DESCRIBE_ERR_NOT_JSON`,
 *   `DESCRIBE_ERR_UNSUPPORTED_PROTOCOL`, `DESCRIBE_ERR_INVALID_FIELD` (with the JSON path),
 *   `DESCRIBE_ERR_BAD_EVENT_SCHEMA`, `DESCRIBE_ERR_BAD_READY_REGEX`, `DESCRIBE_ERR_NAME_COLLISION`.
 *
 * @example
 * ```ts
 * const spec = parseDescribe(stdout, '/opt/tools/log_watcher')
 * spec.process.mode // 'stream'
 * spec.warnings     // load warnings to show the operator
 * ```
 */
export function parseDescribe(stdout: string | Uint8Array, toolPath: string): ToolSpec {
  return parseWith(defaultEventSchemaCompiler(), stdout, toolPath)
}

/** {@link parseDescribe} with the event schemas compiled by `schemas` (a describe service's own). */
export function parseWith(
  schemas: EventSchemaCompiler,
  stdout: string | Uint8Array,
  toolPath: string,
): ToolSpec {
  const load: Load = { tool: toolPath, warnings: [], schemas }
  const document = readDocument(stdout, load)
  if (!isPlainObject(document)) {
    const reason = `expected an object (the describe document); got ${show(document)}`
    fail(load, DescribeErrorCodes.INVALID_FIELD, '$', reason)
  }
  const base = { path: toolPath, dir: dirname(toolPath) }
  const protocol = protocolOf(document, load)
  load.warnings.push(...unknownKeyWarnings(document, protocol))
  if (protocol === 1) {
    const raw = check(v1Document, document, load)
    return {
      ...base,
      protocol: 1,
      slug: raw.slug,
      description: raw.description,
      args: argSpecs(raw.args, '$.args', '', load),
      ...emptyResultOf(raw['empty-result']),
      check: false,
      help: false,
      commands: [],
      process: v1Process(),
      runtime: defaultRuntime(),
      warnings: load.warnings,
    }
  }
  const raw = check(v2Document, document, load)
  const args = argSpecs(raw.args, '$.args', '', load)
  const process = processOf(raw.process, load)
  const commands = commandsOf(raw.commands, raw.slug, process.mode, load)
  if (process.terminal !== undefined) refuseStdinArgs(args, commands, load)
  const runtime = runtimeOf(raw.runtime, process, load)
  return {
    ...base,
    protocol: 2,
    slug: raw.slug,
    description: raw.description,
    args,
    ...emptyResultOf(raw['empty-result']),
    check: raw.check ?? false,
    help: raw.help ?? false,
    commands,
    process,
    runtime,
    warnings: load.warnings,
  }
}

/** On a terminal, stdin is the keyboard: an argument cannot be written to it (decision 0110). */
function refuseStdinArgs(args: readonly ArgSpec[], commands: readonly CommandSpec[], load: Load): void {
  const places = [
    ...args.map((arg, i) => ({ arg, field: `$.args[${i}].mode` })),
    ...commands.flatMap((command, c) =>
      command.args.map((arg, i) => ({ arg, field: `$.commands[${c}].args[${i}].mode` })),
    ),
  ]
  const onStdin = places.find((place) => place.arg.mode === 'stdin')
  if (onStdin === undefined) return
  const reason = `not "stdin" on a terminal ($.process.terminal): stdin is the keyboard there; pass ${onStdin.arg.name} as an argument or in the environment`
  fail(load, DescribeErrorCodes.INVALID_FIELD, onStdin.field, reason)
}
