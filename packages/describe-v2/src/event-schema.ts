import type { ErrorObject, ValidateFunction } from 'ajv'
import AjvModule from 'ajv'
import { isPlainObject, jsonPath, pointerSegments, show } from './internal/text.js'
import type { EventValidator, JsonSchema } from './types.js'

// ajv is CommonJS: under NodeNext the default import is `module.exports`, whose `default` is the class.
const Ajv = AjvModule.default

/** Where ajv's warnings (an unknown `format`, ...) go while one schema compiles. */
let warningSink: string[] | undefined

function collect(...parts: unknown[]): void {
  warningSink?.push(parts.map(String).join(' '))
}

/**
 * The one Ajv instance every declared schema compiles in (JSON Schema draft-07). `strict: false`
 * accepts the unknown keywords tool authors write; its warnings are kept as load warnings instead
 * of being printed on the console of whoever embeds toolvisor.
 */
const ajv = new Ajv({
  allErrors: false,
  strict: false,
  logger: { log: collect, warn: collect, error: collect },
})

function jsonText(value: unknown): string {
  return JSON.stringify(value) ?? String(value)
}

function cut(text: string): string {
  return text.length > 80 ? `${text.slice(0, 79)}…` : text
}

function details(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return `: ${show(params.additionalProperty)}`
    case 'enum':
      return Array.isArray(params.allowedValues)
        ? `: ${cut(params.allowedValues.map(jsonText).join(', '))}`
        : ''
    case 'const':
      return `: ${show(params.allowedValue)}`
    default:
      return ''
  }
}

/** ajv's first error as `$.level: must be string`. */
function reasonOf(errors: readonly ErrorObject[] | null | undefined): string {
  const [first] = errors ?? []
  if (first === undefined) return 'does not match the schema'
  return `${jsonPath(pointerSegments(first.instancePath))}: ${first.message ?? 'is invalid'}${details(first)}`
}

function validatorOf(validate: ValidateFunction): EventValidator {
  return (value) => {
    try {
      return validate(value) ? undefined : reasonOf(validate.errors)
    } catch (error) {
      // A recursive schema over a very deep value can exhaust the stack: that value does not pass.
      return `$: could not be validated (${error instanceof Error ? error.message : String(error)})`
    }
  }
}

function normalizeId(id: string): string {
  return id.replace(/#\/?$/, '')
}

/** A compiled validator and the warnings ajv gave while compiling it. */
export interface CompiledEventSchema {
  readonly validate: EventValidator
  readonly warnings: readonly string[]
}

/** Most compiled schemas kept: enough for every tool of a large toolbox, bounded all the same. */
const cacheSize = 256

/**
 * Compiled schemas by their JSON text. ajv takes milliseconds per schema (meta-validation and
 * code generation) and a toolbox is loaded again and again with the same declarations; validators
 * are pure, so one compiled per distinct schema text is shared.
 */
const cache = new Map<string, CompiledEventSchema>()

function cacheKey(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema)
  } catch {
    return undefined
  }
}

/**
 * Compiles `schema` and keeps ajv's warnings. Internal: `parseDescribe` turns the warnings into
 * load warnings. Throws a plain `Error` with ajv's message when the schema does not compile.
 */
export function compileEventSchemaWithWarnings(schema: JsonSchema): CompiledEventSchema {
  const key = cacheKey(schema)
  const hit = key === undefined ? undefined : cache.get(key)
  if (key !== undefined && hit !== undefined) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const compiled = compileFresh(schema)
  if (key !== undefined) {
    cache.set(key, compiled)
    for (const oldest of cache.keys()) {
      if (cache.size <= cacheSize) break
      cache.delete(oldest)
    }
  }
  return compiled
}

function compileFresh(schema: JsonSchema): CompiledEventSchema {
  if (typeof schema !== 'boolean' && !isPlainObject(schema)) {
    throw new Error(`a JSON Schema must be an object or a boolean; got ${show(schema)}`)
  }
  const id = typeof schema === 'object' ? schema.$id : undefined
  const before = new Set([...Object.keys(ajv.schemas), ...Object.keys(ajv.refs)])
  // A declared `$id` must not replace (and, on removal, delete) a schema ajv itself holds.
  if (typeof id === 'string' && before.has(normalizeId(id))) {
    throw new Error(`schema with key or id "${id}" already exists`)
  }
  const warnings: string[] = []
  warningSink = warnings
  let validate: ValidateFunction
  try {
    validate = ajv.compile(schema) as ValidateFunction
  } catch (error) {
    throw new Error(error instanceof Error ? error.message : String(error), { cause: error })
  } finally {
    warningSink = undefined
    // Compiled validators hold what they reference: forget the schema so that reloading a tool
    // (same `$id` again) compiles afresh and the registry does not grow with every load.
    if (typeof schema === 'object' && (typeof id === 'string' || !id)) ajv.removeSchema(schema)
    for (const key of Object.keys(ajv.schemas)) if (!before.has(key)) delete ajv.schemas[key]
    for (const key of Object.keys(ajv.refs)) if (!before.has(key)) delete ajv.refs[key]
  }
  if ((validate as { $async?: unknown }).$async === true) {
    throw new Error('asynchronous schemas ($async) are not supported: an event is validated as it arrives')
  }
  return { validate: validatorOf(validate), warnings: [...new Set(warnings)] }
}

/**
 * Compiles a JSON Schema a tool declared (`process.output.event`, `process.input.event`) into a
 * validator that returns `undefined` for a matching value, else a short reason such as
 * `$.level: must be string`. One shared Ajv instance (draft-07, `strict: false`) compiles every
 * schema; compile once at load, validate many times.
 *
 * @throws Error with ajv's message when the schema does not compile.
 *
 * @example
 * ```ts
 * const validate = compileEventSchema({ type: 'object', required: ['line'] })
 * validate({ line: 'x' }) // undefined
 * validate({})            // "$: must have required property 'line'"
 * ```
 */
export function compileEventSchema(schema: JsonSchema): EventValidator {
  return compileEventSchemaWithWarnings(schema).validate
}
