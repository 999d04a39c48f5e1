import type { EventSchemaCompiler } from './internal/schema-compiler.js'
import { createEventSchemaCompiler } from './internal/schema-compiler.js'
import type { EventValidator, JsonSchema } from './types.js'

/**
 * The compiler behind the convenience exports ({@link compileEventSchema}, `parseDescribe`),
 * created on first use. Describe services never use it: each has its own (`createDescribeService`).
 */
let defaultCompiler: EventSchemaCompiler | undefined

/** The compiler of the convenience exports. Internal. */
export function defaultEventSchemaCompiler(): EventSchemaCompiler {
  defaultCompiler ??= createEventSchemaCompiler()
  return defaultCompiler
}

/**
 * Compiles a JSON Schema a tool declared (`process.output.event`, `process.input.event`) into a
 * validator that returns `undefined` for a matching value, else a short reason such as
 * `$.level: must be string`. Draft-07, `strict: false`; compile once at load, validate many times.
 * This export uses a compiler of its own; a kernel's describe service has another.
 *
 * @throws Error when the schema does not compile, in our words with the JSON path of each problem
 *   (`$.type: expected one of "array", ...; got "strin"`).
 *
 * @example
 * ```ts
 * const validate = compileEventSchema({ type: 'object', required: ['line'] })
 * validate({ line: 'x' }) // undefined
 * validate({})            // "$: must have required property 'line'"
 * ```
 */
export function compileEventSchema(schema: JsonSchema): EventValidator {
  return defaultEventSchemaCompiler().compile(schema).validate
}
