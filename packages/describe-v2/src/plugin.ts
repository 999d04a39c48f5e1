import type { Token } from '@toolvisor/kernel'
import { definePlugin, token } from '@toolvisor/kernel'
import { compileEventSchema } from './event-schema.js'
import { parseDescribe } from './parse.js'
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

/** The token under which {@link describePlugin} provides the {@link DescribeService}. */
export const DescribeToken: Token<DescribeService> = token<DescribeService>('describe')

/**
 * Provides {@link DescribeToken}. It injects nothing and takes no config: the service is pure
 * functions, so one instance serves every kernel.
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
    ctx.provide(DescribeToken, { parse: parseDescribe, render: renderCall, inputSchema, compileEventSchema })
  },
})
