// One declaration, two derivations: the schema the model reads and the check of a call, and the
// rules that differ between tools (unknown keys, one problem or all, a field required by another).
import { describe, expect, it } from 'vitest'
import { type ArgsRules, argsSchema, declareArgs, type Field, required } from './arguments.js'

/** A string field whose problem names the key and what came. */
const word = (description?: string): Field<string> => ({
  schema: { type: 'string', minLength: 1 },
  ...(description === undefined ? {} : { description }),
  check: (value, { key }) =>
    typeof value === 'string' && value.length > 0
      ? { value }
      : { problem: `${key}: not a word (${JSON.stringify(value) ?? 'nothing'})` },
})
const count: Field<number> = {
  schema: { type: 'integer', minimum: 0 },
  description: 'how many',
  check: (value, { key }) =>
    Number.isInteger(value) ? { value: value as number } : { problem: `${key}: not a count` },
}
const REFUSING: ArgsRules = {
  problems: 'first',
  notObject: (raw) => `not an object: ${JSON.stringify(raw)}`,
  unknownKey: (key, known) => `unknown ${key}; known ${known.join(', ')}`,
}
const DROPPING: ArgsRules = { problems: 'all', notObject: () => 'not an object' }

describe('argsSchema', () => {
  it('shows each field in order, its description last, the required ones listed, nothing else', () => {
    const event = { type: 'object', properties: { say: { type: 'string' } } }
    const schema = argsSchema({ name: required(word('who')), n: count, event: { ...word(), schema: event } })
    expect(JSON.stringify(schema)).toBe(
      JSON.stringify({
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, description: 'who' },
          n: { type: 'integer', minimum: 0, description: 'how many' },
          event,
        },
        required: ['name'],
        additionalProperties: false,
      }),
    )
    // A field without a description is its schema as declared (a describe document's, verbatim).
    expect((schema.properties as Record<string, unknown>).event).toBe(event)
  })
})

describe('declareArgs', () => {
  const both = declareArgs({ name: required(word('who')), n: count }, REFUSING)

  it('derives its schema from the same fields', () => {
    expect(both.schema).toEqual(argsSchema(both.fields))
  })

  it('passes the checked values on, an absent optional one left out', () => {
    expect(both.parse({ name: 'ada', n: 2 })).toEqual({ value: { name: 'ada', n: 2 } })
    expect(both.parse({ name: 'ada' })).toEqual({ value: { name: 'ada' } })
  })

  it('refuses a non-object, a missing required field (in its words) and an unknown key', () => {
    for (const raw of ['x', null, [1], 3, undefined])
      expect(both.parse(raw)).toEqual({ problem: `not an object: ${JSON.stringify(raw)}` })
    expect(both.parse({})).toEqual({ problem: 'name: not a word (nothing)' })
    // Unknown keys come first, and Object.prototype's names are no fields.
    expect(both.parse({ n: 'x', extra: 1 })).toEqual({ problem: 'unknown extra; known name, n' })
    expect(both.parse(JSON.parse('{"name":"a","constructor":1}'))).toEqual({
      problem: 'unknown constructor; known name, n',
    })
  })

  it("answers the first problem, or with problems: 'all' each of them up to a field that stops", () => {
    expect(both.parse({ name: 7, n: 'x' })).toEqual({ problem: 'name: not a word (7)' })
    const all = declareArgs({ a: word(), b: word(), c: { ...word(), stops: true }, d: word() }, DROPPING)
    expect(all.parse({ a: 1, b: 2, d: 4 })).toEqual({
      problem: 'a: not a word (1); b: not a word (2); d: not a word (4)',
    })
    expect(all.parse({ a: 1, c: 3, d: 4 })).toEqual({ problem: 'a: not a word (1); c: not a word (3)' })
    // Dropped, not refused: a key no field declares.
    expect(all.parse({ a: 'x', extra: 1 })).toEqual({ value: { a: 'x' } })
  })

  it('checks an absent field that the fields before it require, telling the check so', () => {
    const seen: unknown[] = []
    const target: Field<string> = {
      schema: { type: 'string' },
      requiredWhen: ({ mode }) => mode === 'one',
      check(value, { required, earlier }) {
        seen.push([value, required, { ...earlier }])
        return typeof value === 'string' ? { value } : { problem: `${String(earlier.mode)} needs a target` }
      },
    }
    const declared = declareArgs({ mode: required(word()), target }, DROPPING)
    expect(declared.schema.required).toEqual(['mode'])
    expect(declared.parse({ mode: 'one' })).toEqual({ problem: 'one needs a target' })
    expect(declared.parse({ mode: 'all' })).toEqual({ value: { mode: 'all' } })
    expect(declared.parse({ mode: 'all', target: 't' })).toEqual({ value: { mode: 'all', target: 't' } })
    expect(seen).toEqual([
      [undefined, true, { mode: 'one' }],
      ['t', false, { mode: 'all' }],
    ])
  })
})
