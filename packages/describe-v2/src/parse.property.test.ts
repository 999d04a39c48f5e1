import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { richV2, TOOL } from '../test/documents.js'
import { ArgumentError, DescribeErrorCodes, LoadingError } from './errors.js'
import { parseDescribe } from './parse.js'
import { renderCall } from './render.js'
import type { ArgSpec, ToolSpec } from './types.js'

const knownCodes: readonly string[] = Object.values(DescribeErrorCodes)

/** What parseDescribe may do with any input: return a ToolSpec, or throw a LoadingError of this package. */
function outcome(stdout: string | Uint8Array, tool = TOOL): ToolSpec | LoadingError {
  try {
    const spec = parseDescribe(stdout, tool)
    expect(typeof spec.slug).toBe('string')
    expect(Array.isArray(spec.args)).toBe(true)
    expect([1, 2]).toContain(spec.protocol)
    expect(spec.path).toBe(tool)
    return spec
  } catch (error) {
    expect(error).toBeInstanceOf(LoadingError)
    const loading = error as LoadingError
    expect(knownCodes).toContain(loading.code)
    expect(loading.tool).toBe(tool)
    expect(loading.message.startsWith(`${tool}: `)).toBe(true)
    expect(loading.reason.length).toBeGreaterThan(0)
    if (loading.field !== undefined) expect(loading.field).toMatch(/^\$/)
    return loading
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Path = readonly (string | number)[]

/** Every path inside a JSON value (the root excluded). */
function paths(value: Json, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return []
  const entries: [string | number, Json][] = Array.isArray(value)
    ? value.map((item, index) => [index, item])
    : Object.entries(value)
  return entries.flatMap(([key, child]) => [[...prefix, key], ...paths(child, [...prefix, key])])
}

interface Mutation {
  readonly at: number
  readonly op: 'delete' | 'replace'
  readonly value: Json
}

function mutate(document: Json, mutations: readonly Mutation[]): Json {
  let current = structuredClone(document)
  for (const mutation of mutations) {
    const all = paths(current)
    const path = all[mutation.at % Math.max(all.length, 1)]
    if (path === undefined) return mutation.value
    const parent = path
      .slice(0, -1)
      .reduce<Json>((node, key) => (node as Record<string, Json>)[key] as Json, current)
    const key = path[path.length - 1] as string | number
    if (Array.isArray(parent) && typeof key === 'number') {
      if (mutation.op === 'delete') parent.splice(key, 1)
      else parent[key] = mutation.value
    } else if (parent !== null && typeof parent === 'object') {
      const record = parent as Record<string, Json>
      if (mutation.op === 'delete') delete record[key]
      else record[key] = mutation.value
    }
    current = structuredClone(current)
  }
  return current
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('delete' as const, 'replace' as const),
  value: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
})

// Generous timeouts: the runs take a few seconds in all, more on a loaded machine.
describe('parseDescribe never throws anything but a LoadingError', { timeout: 30_000 }, () => {
  it('(a) on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        outcome(text)
      }),
      { numRuns: 800 },
    )
  })

  it('(a) on arbitrary bytes, raw or around a JSON object', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (bytes, wrap) => {
        if (!wrap) return void outcome(bytes)
        const prefix = new TextEncoder().encode('{"slug":"s","description":"')
        const suffix = new TextEncoder().encode('","args":[]}')
        outcome(new Uint8Array([...prefix, ...bytes, ...suffix]))
      }),
      { numRuns: 800 },
    )
  })

  it('(b) on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        outcome(JSON.stringify(value))
      }),
      { numRuns: 800 },
    )
  })

  it('(c) on mutations of a valid v2 document', () => {
    const valid = richV2() as Json
    expect(outcome(JSON.stringify(valid))).not.toBeInstanceOf(LoadingError)
    let loaded = 0
    let refused = 0
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
        const result = outcome(JSON.stringify(mutate(valid, mutations)))
        if (result instanceof LoadingError) refused++
        else loaded++
      }),
      { numRuns: 600 },
    )
    // Both outcomes happen: the mutations reach required and optional fields alike.
    expect(loaded).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
  })

  it('(c) on v1 documents carrying mutated v2 fields (all ignored)', () => {
    const { protocol: _, ...v1 } = richV2()
    fc.assert(
      fc.property(
        fc.constantFrom('process', 'runtime', 'commands', 'check', 'help'),
        fc.jsonValue(),
        (key, value) => {
          const result = outcome(JSON.stringify({ ...v1, [key]: value }))
          expect(result).not.toBeInstanceOf(LoadingError)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('(d) every LoadingError message starts with the tool path', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        fc.jsonValue({ maxDepth: 2 }),
        (tool, value) => {
          const result = outcome(JSON.stringify({ protocol: 2, slug: value }), tool)
          expect(result).toBeInstanceOf(LoadingError)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('renderCall on arbitrary values', { timeout: 30_000 }, () => {
  const modes = ['positional', 'dashdashspace', 'dashdashequal', 'stdin', 'env'] as const
  const argSpec: fc.Arbitrary<ArgSpec> = fc
    .record({
      name: fc.stringMatching(/^[a-z][a-z_-]{0,8}$/),
      mode: fc.constantFrom(...modes),
      required: fc.boolean(),
    })
    .map(({ name, mode, required }) => ({
      name,
      mode,
      required,
      arity: required ? 'single' : 'optional',
      description: '',
      type: 'string',
      backingType: 'string',
    }))

  it('returns a call or throws an ArgumentError, and renders scalars in describe order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(argSpec, { selector: (a) => a.name, maxLength: 6 }),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'path', 'x_y'), fc.jsonValue({ maxDepth: 1 })),
        (args, values) => {
          try {
            const call = renderCall(args, values)
            expect(call.argv[0]).toBe('run')
            const positional = args.filter(
              (a) => a.mode === 'positional' && typeof values[a.name] === 'string',
            )
            for (const a of positional) expect(call.argv).toContain(values[a.name])
          } catch (error) {
            expect(error).toBeInstanceOf(ArgumentError)
          }
        },
      ),
      { numRuns: 500 },
    )
  })
})
