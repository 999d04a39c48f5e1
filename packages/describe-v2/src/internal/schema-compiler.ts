import type { ValidateFunction } from 'ajv'
import AjvModule from 'ajv'
import type { EventValidator, JsonSchema } from '../types.js'
import { validatorOf } from './event-validator.js'
import type { SchemaProblem } from './schema-problems.js'
import { compileProblem, metaProblems, SchemaCompileError } from './schema-problems.js'
import { isPlainObject, show } from './text.js'

// ajv is CommonJS: under NodeNext the default import is `module.exports`, whose `default` is the class.
const Ajv = AjvModule.default

type AjvInstance = InstanceType<typeof Ajv>

/** A compiled validator and the warnings ajv gave while compiling it. */
export interface CompiledEventSchema {
  readonly validate: EventValidator
  readonly warnings: readonly string[]
}

/** Compiles declared JSON Schemas; each instance has its own Ajv, schema cache and warnings. */
export interface EventSchemaCompiler {
  /**
   * Compiles `schema` (draft-07) and keeps ajv's warnings (an unknown `format`, ...).
   * @throws SchemaCompileError, in our words with the JSON path of each problem.
   */
  compile(schema: JsonSchema): CompiledEventSchema
}

/** Most compiled schemas kept: enough for every tool of a large toolbox, bounded all the same. */
const cacheSize = 256

function normalizeId(id: string): string {
  return id.replace(/#\/?$/, '')
}

function cacheKey(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema)
  } catch {
    return undefined
  }
}

/** What must be refused before ajv sees the schema: a shape, `$schema` or `$id` ajv cannot take. */
function shapeProblem(schema: JsonSchema, held: ReadonlySet<string>): SchemaProblem | undefined {
  if (typeof schema !== 'boolean' && !isPlainObject(schema)) {
    return { at: [], reason: `a JSON Schema must be an object or a boolean; got ${show(schema)}` }
  }
  if (typeof schema === 'boolean') return undefined
  const declared = schema.$schema
  if (declared !== undefined && (typeof declared !== 'string' || !held.has(normalizeId(declared)))) {
    const reason = `expected "http://json-schema.org/draft-07/schema#" or no $schema (draft-07 is assumed); got ${show(declared)}`
    return { at: ['$schema'], reason }
  }
  const id = schema.$id
  // A declared `$id` must not replace (and, on removal, delete) a meta-schema ajv itself holds.
  if (typeof id === 'string' && held.has(normalizeId(id))) {
    return {
      at: ['$id'],
      reason: `${show(id)} is the id of the JSON Schema meta-schema; give the schema an id of its own`,
    }
  }
  return undefined
}

/** Compiles one schema in `ajv`, leaving ajv's registry as it found it. */
function compileIn(ajv: AjvInstance, schema: JsonSchema): ValidateFunction {
  const held = new Set([...Object.keys(ajv.schemas), ...Object.keys(ajv.refs)])
  const shape = shapeProblem(schema, held)
  if (shape !== undefined) throw new SchemaCompileError([shape])
  try {
    if (!ajv.validateSchema(schema)) throw new SchemaCompileError(metaProblems(schema, ajv.errors ?? []))
    return ajv.compile(schema) as ValidateFunction
  } catch (error) {
    if (error instanceof SchemaCompileError) throw error
    throw new SchemaCompileError([compileProblem(schema, error)], { cause: error })
  } finally {
    // Compiled validators hold what they reference: forget the schema so that reloading a tool
    // (same `$id` again) compiles afresh and the registry does not grow with every load.
    // (ajv's removeSchema throws on a `$id` that is not a string: the meta-schema refused it anyway.)
    const id = typeof schema === 'object' ? schema.$id : undefined
    if (typeof schema === 'object' && (typeof id === 'string' || !id)) ajv.removeSchema(schema)
    for (const key of Object.keys(ajv.schemas)) if (!held.has(key)) delete ajv.schemas[key]
    for (const key of Object.keys(ajv.refs)) if (!held.has(key)) delete ajv.refs[key]
  }
}

/**
 * A compiler with its own Ajv instance (draft-07, `strict: false`: tool authors write unknown
 * keywords) and its own cache of compiled schemas by JSON text (ajv takes milliseconds per schema
 * and a toolbox is loaded again and again with the same declarations). ajv's warnings are kept as
 * load warnings instead of being printed on the console of whoever embeds toolvisor.
 */
export function createEventSchemaCompiler(): EventSchemaCompiler {
  let warningSink: string[] | undefined
  const collect = (...parts: unknown[]): void => {
    warningSink?.push(parts.map(String).join(' '))
  }
  // validateSchema: false: compileIn validates against the meta-schema itself, to word the errors.
  const ajv = new Ajv({
    allErrors: false,
    strict: false,
    validateSchema: false,
    logger: { log: collect, warn: collect, error: collect },
  })
  const cache = new Map<string, CompiledEventSchema>()

  const compileFresh = (schema: JsonSchema): CompiledEventSchema => {
    const warnings: string[] = []
    warningSink = warnings
    let validate: ValidateFunction
    try {
      validate = compileIn(ajv, schema)
    } finally {
      warningSink = undefined
    }
    if ((validate as { $async?: unknown }).$async === true) {
      const reason = 'asynchronous schemas are not supported: an event is validated as it arrives'
      throw new SchemaCompileError([{ at: ['$async'], reason }])
    }
    return { validate: validatorOf(validate), warnings: [...new Set(warnings)] }
  }

  return {
    compile(schema) {
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
    },
  }
}
