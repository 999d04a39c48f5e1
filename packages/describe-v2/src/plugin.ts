import type { Token } from '@toolvisor/kernel'
import { definePlugin, token } from '@toolvisor/kernel'
import type { compileEventSchema } from './event-schema.js'
import { createEventSchemaCompiler } from './internal/schema-compiler.js'
import type { parseDescribe } from './parse.js'
import { parseWith } from './parse.js'
import { inputSchema, renderCall } from './render.js'

/** The `describe` seam: load a describe document, render calls, compile event schemas. */
export interface DescribeService {
  /** {@link parseDescribe}: stdout of `TOOL describe` → `ToolSpec`, or a `LoadingError`. */
  readonly parse: typeof parseDescribe
  /** {@link renderCall}: the model's arguments → argv, stdin bytes and environment. */
  readonly render: typeof renderCall
  /** {@link inputSchema}: the model-facing JSON Schema of a tool's arguments. */
  readonly inputSchema: typeof inputSchema
  /** {@link compileEventSchema}: a declared JSON Schema → an event validator. */
  readonly compileEventSchema: typeof compileEventSchema
}

/**
 * A describe service with state of its own: its Ajv instance, its cache of compiled event
 * schemas and the sink of ajv's warnings. Two services share nothing, so two kernels in one
 * process never see each other's schemas (`$id`s, cache entries, warnings).
 *
 * @example
 * ```ts
 * const describe = createDescribeService()
 * const spec = describe.parse(stdout, '/opt/tools/log_watcher')
 * ```
 */
export function createDescribeService(): DescribeService {
  const schemas = createEventSchemaCompiler()
  return {
    parse: (stdout, toolPath) => parseWith(schemas, stdout, toolPath),
    render: renderCall,
    inputSchema,
    compileEventSchema: (schema) => schemas.compile(schema).validate,
  }
}

/** The token under which {@link describePlugin} provides the {@link DescribeService}. */
export const DescribeToken: Token<DescribeService> = token<DescribeService>('describe')

/**
 * Provides {@link DescribeToken}. It injects nothing and takes no config; each kernel that uses it
 * gets a service of its own ({@link createDescribeService}).
 *
 * @example
 * ```ts
 * await kernel.use(describePlugin)
 * const spec = kernel.get(DescribeToken)?.parse(stdout, '/opt/tools/git')
 * ```
 */
export const describePlugin = definePlugin({
  name: 'describe-v2',
  provides: [DescribeToken],
  apply(ctx) {
    ctx.provide(DescribeToken, createDescribeService())
  },
})
