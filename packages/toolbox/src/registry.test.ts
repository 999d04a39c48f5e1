import { describe, expect, it } from 'vitest'
import { createToolRegistry } from './registry.js'
import type { Tool } from './types.js'

const tool = (name: string): Tool => ({
  name,
  description: name,
  inputSchema: { type: 'object' },
  call: async () => ({ content: [], isError: false }),
})

describe('ToolRegistry.onChange', () => {
  it('tells every listener after a tool is registered or removed and after a load report, until it unsubscribes', () => {
    const tools = createToolRegistry()
    const seen: string[] = []
    const off = tools.onChange?.(() =>
      seen.push(
        tools
          .list()
          .map((t) => t.name)
          .join(','),
      ),
    )
    expect(off).toBeTypeOf('function')
    const remove = tools.register(tool('a'))
    tools.register(tool('b.c'))
    tools.reportLoadError({ severity: 'error', tool: '/tb/x', message: '/tb/x: bad', code: 'X' })
    remove()
    remove() // already gone: no change, no call
    off?.()
    tools.register(tool('d'))
    expect(seen).toEqual(['a', 'a,b.c', 'a,b.c', 'b.c'])
  })

  it('does not call listeners for a refused registration', () => {
    const tools = createToolRegistry()
    tools.register(tool('a.b'))
    let calls = 0
    tools.onChange?.(() => calls++)
    expect(() => tools.register(tool('a__b'))).toThrow(/collides/)
    expect(calls).toBe(0)
  })

  it('runs the other listeners and keeps the change when one throws, and reports its error as a process warning', async () => {
    const tools = createToolRegistry()
    const thrown = new Error('listener bug')
    const warned = new Promise<unknown>((resolve) => process.once('warning', resolve))
    let second = 0
    tools.onChange?.(() => {
      throw thrown
    })
    tools.onChange?.(() => second++)
    tools.register(tool('a'))
    expect(second).toBe(1)
    expect(tools.list().map((t) => t.name)).toEqual(['a'])
    expect(await warned).toBe(thrown)
  })
})

describe('guidance', () => {
  it('keeps sections by order, replaces one of the same name, and removes only its own', () => {
    const tools = createToolRegistry()
    const section = (name: string, order: number, text = name) => ({ name, description: name, text, order })
    const removeLate = tools.addGuidance!(section('late', 200))
    tools.addGuidance!(section('tool:bash', 105))
    const first = tools.addGuidance!(section('early', 10, 'one'))
    tools.addGuidance!(section('early', 10, 'two'))
    expect(tools.guidance!().map((s) => [s.name, s.text])).toEqual([
      ['early', 'two'],
      ['tool:bash', 'tool:bash'],
      ['late', 'late'],
    ])
    first() // replaced already: removes nothing
    removeLate()
    expect(tools.guidance!().map((s) => s.name)).toEqual(['early', 'tool:bash'])
  })
})
