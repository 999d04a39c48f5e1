import { ArgumentError } from './errors.js'
import { isPlainObject, show } from './internal/text.js'
import { envVariableName } from './naming.js'
import type { ArgSpec, InputSchema, RenderedCall } from './types.js'

/**
 * The JSON Schema of a tool's arguments as the model sees it: one property per argument typed by
 * its `backing_type`, the `single` ones required, nothing else accepted.
 *
 * @example
 * ```ts
 * inputSchema(spec.args)
 * // { type: 'object', properties: { path: { type: 'string', description: 'the file' } },
 * //   required: ['path'], additionalProperties: false }
 * ```
 */
export function inputSchema(args: readonly ArgSpec[]): InputSchema {
  return {
    type: 'object',
    // fromEntries defines own properties, so even an argument named `__proto__` is kept.
    properties: Object.fromEntries(
      args.map((arg) => [arg.name, { type: arg.backingType, description: arg.description }]),
    ),
    required: args.filter((arg) => arg.required).map((arg) => arg.name),
    additionalProperties: false,
  }
}

/** One argument value as text (ruling 2), or `undefined` when it is omitted. */
function textOf(arg: ArgSpec, value: unknown): string | undefined {
  if (value === undefined || value === null) {
    if (arg.required)
      throw new ArgumentError(arg.name, value === null ? 'required, got null' : 'required, missing')
    return undefined
  }
  let text: string
  if (typeof value === 'string') text = value
  else if (typeof value === 'boolean') text = String(value)
  else if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new ArgumentError(arg.name, `expected a finite number; got ${show(value)}`)
    text = JSON.stringify(value)
  } else {
    throw new ArgumentError(arg.name, `expected a string, number or boolean; got ${show(value)}`)
  }
  // argv and the environment are C strings: a NUL would cut the value (Node refuses it outright).
  if (arg.mode !== 'stdin' && text.includes('\0')) {
    throw new ArgumentError(arg.name, `contains a NUL character, which cannot be passed by ${arg.mode}`)
  }
  return text
}

/**
 * Renders a call exactly as protocol §1 says: argv `['run', command?, ...]` in describe order
 * (`positional` → value, `dashdashspace` → `--name value`, `dashdashequal` → `--name=value`),
 * each `stdin` value followed by `\n` (UTF-8), each `env` value as the variable named after the
 * argument. Strings pass as they are, numbers and booleans as JSON text; `null` or missing means
 * omitted (a later positional then shifts, as in v1); unknown keys are ignored.
 *
 * @param args - the tool's (or the command's) declared arguments
 * @param values - the model's arguments: a JSON object, or `undefined` for none
 * @param options - `command`: the sub-command, rendered right after `run`
 * @throws ArgumentError (`DESCRIBE_ERR_BAD_ARGUMENT`) for an object or array value, a missing
 *   required argument, or `values` that is not an object; the tool must not be run.
 *
 * @example
 * ```ts
 * renderCall(spec.args, { path: '/var/log/syslog', lines: 20 })
 * // { argv: ['run', '--path', '/var/log/syslog', '--lines=20'], stdin: Uint8Array [], env: {} }
 * ```
 */
export function renderCall(
  args: readonly ArgSpec[],
  values: unknown,
  options?: { readonly command?: string },
): RenderedCall {
  if (values !== undefined && !isPlainObject(values)) {
    throw new ArgumentError(undefined, `the arguments must be a JSON object; got ${show(values)}`)
  }
  const argv = ['run']
  if (options?.command !== undefined) argv.push(options.command)
  let stdin = ''
  const env: Record<string, string> = {}
  for (const arg of args) {
    // Own keys only: `toString` or `__proto__` must not come from Object.prototype.
    const value = values !== undefined && Object.hasOwn(values, arg.name) ? values[arg.name] : undefined
    const text = textOf(arg, value)
    if (text === undefined) continue
    switch (arg.mode) {
      case 'positional':
        argv.push(text)
        break
      case 'dashdashspace':
        argv.push(`--${arg.name}`, text)
        break
      case 'dashdashequal':
        argv.push(`--${arg.name}=${text}`)
        break
      case 'stdin':
        stdin += `${text}\n`
        break
      case 'env':
        env[envVariableName(arg.name)] = text
        break
    }
  }
  return { argv, stdin: new TextEncoder().encode(stdin), env }
}
