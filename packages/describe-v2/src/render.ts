import { ArgumentError, argumentLabel } from './errors.js'
import { isPlainObject, listed, show } from './internal/text.js'
import type { ValueProblem } from './internal/values.js'
import { argumentList, checkValue, unknownKeys } from './internal/values.js'
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

/**
 * The ArgumentError for `problems`: one names its argument, several are listed (bounded); when
 * one is about the schema (a type, an unknown key), the arguments that exist are listed too.
 */
function argumentError(problems: readonly ValueProblem[], args: readonly ArgSpec[]): ArgumentError {
  const tail = problems.some((problem) => problem.schema) ? `; ${argumentList(args)}` : ''
  const [only] = problems
  if (problems.length === 1 && only !== undefined) return new ArgumentError(only.argument, only.reason + tail)
  const each = problems.map((problem) => `${argumentLabel(problem.argument)}: ${problem.reason}`)
  return new ArgumentError(undefined, listed(each) + tail)
}

/** Every value checked against `args`: the text of each argument (`undefined`: omitted), or the error. */
function textsOf(
  args: readonly ArgSpec[],
  values: Record<string, unknown> | undefined,
): (string | undefined)[] {
  const problems = values === undefined ? [] : unknownKeys(args, values)
  const texts = args.map((arg) => {
    // Own keys only: `toString` or `__proto__` must not come from Object.prototype.
    const value = values !== undefined && Object.hasOwn(values, arg.name) ? values[arg.name] : undefined
    const checked = checkValue(arg, value)
    if (checked !== undefined && 'problem' in checked) problems.push(checked.problem)
    return checked !== undefined && 'text' in checked ? checked.text : undefined
  })
  if (problems.length > 0) throw argumentError(problems, args)
  return texts
}

/**
 * Renders a call exactly as protocol §1 says: argv `['run', command?, ...]` in describe order
 * (`positional` → value, `dashdashspace` → `--name value`, `dashdashequal` → `--name=value`),
 * each `stdin` value followed by `\n` (UTF-8), each `env` value as the variable named after the
 * argument. `null` or missing means omitted (a later positional then shifts, as in v1).
 *
 * Every value is first checked against what the model was shown ({@link inputSchema}): its
 * backing type (a string holding a JSON number counts as that number, `"true"`/`"false"` as the
 * boolean; numbers and booleans pass as their JSON text; integers must be safe), no key the
 * schema lacks, and no `positional` or `dashdashspace` value starting with `-` unless it is a
 * number for a numeric argument or the argument declares `allow_dash` (decision 0009).
 *
 * @param args - the tool's (or the command's) declared arguments
 * @param values - the model's arguments: a JSON object, or `undefined` for none
 * @param options - `command`: the sub-command, rendered right after `run`
 * @throws ArgumentError (`DESCRIBE_ERR_BAD_ARGUMENT`) naming every problem (bounded), and the
 *   arguments that exist when a type or a key was wrong; the tool must not be run.
 *
 * @example
 * ```ts
 * renderCall(spec.args, { path: '/var/log/syslog', lines: '20' })
 * // { argv: ['run', '--path', '/var/log/syslog', '--lines=20'], stdin: Uint8Array [], env: {} }
 * renderCall(spec.args, { path: '/var/log/syslog', lines: 'twenty' })
 * // throws: argument "lines": expected an integer; got "twenty"; the arguments are "path" (string, required), "lines" (integer, optional)
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
  const texts = textsOf(args, values)
  const argv = ['run']
  if (options?.command !== undefined) argv.push(options.command)
  let stdin = ''
  const env: Record<string, string> = {}
  args.forEach((arg, index) => {
    const text = texts[index]
    if (text === undefined) return
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
  })
  return { argv, stdin: new TextEncoder().encode(stdin), env }
}
