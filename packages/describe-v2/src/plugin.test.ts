import { Kernel } from '@toolvisor/kernel'
import { describe, expect, it } from 'vitest'
import { compileEventSchema } from './event-schema.js'
import { parseDescribe } from './parse.js'
import { DescribeToken, describePlugin } from './plugin.js'
import { inputSchema, renderCall } from './render.js'

describe('describePlugin', () => {
  it('provides the describe service under the describe token, with no config', async () => {
    const kernel = new Kernel()
    const handle = kernel.use(describePlugin)
    await handle
    expect(describePlugin.name).toBe('describe-v2')
    expect(DescribeToken.key).toBe('describe')
    expect(handle.state).toBe('active')
    const service = kernel.get(DescribeToken)
    expect(service).toEqual({ parse: parseDescribe, render: renderCall, inputSchema, compileEventSchema })
    const spec = service?.parse('{"slug":"echo","description":"d","args":[]}', '/t/echo')
    expect(spec?.slug).toBe('echo')
    await kernel.dispose()
    expect(kernel.get(DescribeToken)).toBeUndefined()
  })
})
