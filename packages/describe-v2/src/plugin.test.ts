import { Kernel } from '@toolvisor/kernel'
import { describe, expect, it } from 'vitest'
import { compileEventSchema } from './event-schema.js'
import { createDescribeService, DescribeToken, describePlugin } from './plugin.js'
import { inputSchema, renderCall } from './render.js'

const document = (event: Record<string, unknown>) =>
  JSON.stringify({ protocol: 2, slug: 's', description: 'd', args: [], process: { output: { event } } })

describe('describePlugin', () => {
  it('provides a describe service of its own under the describe token, with no config', async () => {
    const kernel = new Kernel()
    const handle = kernel.use(describePlugin)
    await handle
    expect(describePlugin.name).toBe('describe-v2')
    expect(DescribeToken.key).toBe('describe')
    expect(handle.state).toBe('active')
    const service = kernel.get(DescribeToken)
    expect(service).toEqual({
      parse: expect.any(Function),
      render: renderCall,
      inputSchema,
      compileEventSchema: expect.any(Function),
    })
    const spec = service?.parse('{"slug":"echo","description":"d","args":[]}', '/t/echo')
    expect(spec?.slug).toBe('echo')
    await kernel.dispose()
    expect(kernel.get(DescribeToken)).toBeUndefined()
  })

  it('gives two kernels two services that share no compiled schema', async () => {
    const kernels = [new Kernel(), new Kernel()]
    for (const kernel of kernels) await kernel.use(describePlugin)
    const [a, b] = kernels.map((kernel) => kernel.get(DescribeToken)!)
    expect(a).not.toBe(b)
    const schema = { $id: 'urn:tool:event', type: 'object', properties: { n: { type: 'number' } } }
    expect(a!.compileEventSchema(schema)).toBe(a!.compileEventSchema(structuredClone(schema)))
    expect(a!.compileEventSchema(schema)).not.toBe(b!.compileEventSchema(schema))
    expect(a!.compileEventSchema(schema)).not.toBe(compileEventSchema(schema))
    for (const kernel of kernels) await kernel.dispose()
  })
})

describe('createDescribeService', () => {
  it('compiles one $id in two services, each with its own schema and warnings, without interference', () => {
    const a = createDescribeService()
    const b = createDescribeService()
    const event = (minimum: number) => ({
      $id: 'https://tools.example/event.json',
      type: 'object',
      properties: { n: { type: 'number', minimum }, at: { type: 'string', format: 'when' } },
    })
    const inA = a.parse(document(event(1)), '/t/a')
    const inB = b.parse(document(event(5)), '/t/b')
    expect(inA.process.output.validate?.({ n: 3 })).toBeUndefined()
    expect(inB.process.output.validate?.({ n: 3 })).toBe('$.n: must be >= 5')
    const warning =
      '$.process.output.event: unknown format "when" ignored in schema at path "#/properties/at"'
    expect(inA.warnings).toEqual([warning])
    expect(inB.warnings).toEqual([warning])
    // Loaded again in each service (a reload): the $id compiles afresh, with the same answers.
    expect(a.parse(document(event(1)), '/t/a').process.output.validate?.({ n: 3 })).toBeUndefined()
    expect(b.parse(document(event(5)), '/t/b').process.output.validate?.({ n: 3 })).toBe('$.n: must be >= 5')
    expect(a.parse(document(event(1)), '/t/a').warnings).toEqual([warning])
  })
})
