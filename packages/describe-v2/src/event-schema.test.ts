import { describe, expect, it } from 'vitest'
import { thrownBy } from '../test/documents.js'
import { LoadingError } from './errors.js'
import { compileEventSchema } from './event-schema.js'
import type { JsonSchema } from './types.js'

describe('compileEventSchema', () => {
  it.each<[string, JsonSchema, unknown, string | undefined]>([
    ['a matching value', { type: 'object', required: ['line'] }, { line: 'x' }, undefined],
    ['a wrong type at the root', { type: 'object' }, 'line', '$: must be object'],
    [
      'a wrong property type',
      { properties: { level: { type: 'string' } } },
      { level: 1 },
      '$.level: must be string',
    ],
    ['a missing property', { required: ['line'] }, {}, "$: must have required property 'line'"],
    [
      'an additional property',
      { type: 'object', properties: {}, additionalProperties: false },
      { extra: 1 },
      '$: must NOT have additional properties: "extra"',
    ],
    [
      'an enum',
      { properties: { op: { enum: ['pattern', 'pause', 1] } } },
      { op: 'stop' },
      '$.op: must be equal to one of the allowed values: "pattern", "pause", 1',
    ],
    ['a const', { properties: { v: { const: 2 } } }, { v: 3 }, '$.v: must be equal to constant: 2'],
    [
      'an item of an array, under a key that needs quoting',
      { items: { properties: { 'a/b~c': { type: 'number' } } } },
      [{ 'a/b~c': 1 }, { 'a/b~c': 'x' }],
      '$[1]["a/b~c"]: must be number',
    ],
    ['true', true, { any: 'thing' }, undefined],
    ['false', false, null, '$: boolean schema is false'],
  ])('%s', (_, schema, value, reason) => {
    expect(compileEventSchema(schema)(value)).toBe(reason)
  })

  it('cuts a long list of allowed values', () => {
    const values = Array.from({ length: 30 }, (_, i) => `value-${i}`)
    const reason = compileEventSchema({ enum: values })('x')
    expect(reason).toBe(
      `$: must be equal to one of the allowed values: ${values
        .map((v) => `"${v}"`)
        .join(', ')
        .slice(0, 79)}…`,
    )
  })

  it('validates many times with one compile, without keeping state between values', () => {
    const validate = compileEventSchema({ type: 'object', properties: { n: { type: 'integer' } } })
    expect(validate({ n: 'x' })).toBe('$.n: must be integer')
    expect(validate({ n: 1 })).toBeUndefined()
    expect(validate({ n: 1.5 })).toBe('$.n: must be integer')
  })

  it('does not modify the value (no defaults, no coercion)', () => {
    const value = { n: '1' }
    compileEventSchema({ properties: { n: { type: 'integer', default: 0 }, m: { default: 1 } } })(value)
    expect(value).toEqual({ n: '1' })
  })

  it('throws a plain Error in our words, with the JSON path, when the schema does not compile', () => {
    const error = thrownBy(() => compileEventSchema({ type: 'strin' }))
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(LoadingError)
    expect((error as Error).message).toBe(
      '$.type: expected one of "array", "boolean", "integer", "null", "number", "object", "string", or an array; got "strin"',
    )
  })

  const types = '"array", "boolean", "integer", "null", "number", "object", "string"'

  it.each<[string, JsonSchema, string]>([
    [
      'a nested unknown type',
      { properties: { level: { type: 'strin' } } },
      `$.properties.level.type: expected one of ${types}, or an array; got "strin"`,
    ],
    [
      'an item of a type list',
      { type: ['string', 'strin'] },
      `$.type[1]: expected one of ${types}; got "strin"`,
    ],
    [
      'a type list with a duplicate',
      { type: ['string', 'string'] },
      '$.type: expected no duplicate items (items 0 and 1 are the same); got an array',
    ],
    [
      'a wrong type inside a tuple of items',
      { items: [{ type: 1 }] },
      `$.items[0].type: expected one of ${types}, or an array; got 1`,
    ],
    ['an $id that is not a string', { $id: 5 } as JsonSchema, '$.$id: expected a string; got 5'],
    ['an empty enum', { enum: [] }, '$.enum: expected at least 1 item; got an array'],
    ['required as a string', { required: 'x' }, '$.required: expected an array; got "x"'],
    ['a negative length', { minLength: -1 }, '$.minLength: expected a number >= 0; got -1'],
    [
      'additionalProperties as a string',
      { additionalProperties: 'no' },
      '$.additionalProperties: expected an object or a boolean; got "no"',
    ],
    [
      'a $schema that is not a string',
      { $schema: 5 } as JsonSchema,
      '$.$schema: expected "http://json-schema.org/draft-07/schema#" or no $schema (draft-07 is assumed); got 5',
    ],
    [
      'a $ref to a part that does not exist',
      { definitions: { a: {} }, properties: { x: { $ref: '#/definitions/b' } } },
      '$.properties.x.$ref: cannot resolve the reference "#/definitions/b": nothing in this schema has that path or $id, and no other schema is fetched',
    ],
    [
      'a bad pattern deep inside',
      { properties: { a: { items: { pattern: '[' } } } },
      '$.properties.a.items.pattern: expected a regular expression (JavaScript, u flag); got "[" (Invalid regular expression: /[/u: Unterminated character class)',
    ],
  ])('words a compile error in our terms, with its JSON path: %s', (_, schema, message) => {
    const thrown = thrownBy(() => compileEventSchema(schema))
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as Error).message).toBe(message)
  })

  it('refuses what is not a schema at all', () => {
    expect(() => compileEventSchema([] as unknown as JsonSchema)).toThrow(
      'a JSON Schema must be an object or a boolean; got an array',
    )
    expect(() => compileEventSchema({ $id: 5 } as JsonSchema)).toThrow(Error)
    expect(compileEventSchema({ type: 'string' })('s')).toBeUndefined()
  })

  it('compiles recursive schemas, and a too deep value fails instead of throwing', () => {
    const validate = compileEventSchema({ type: 'array', items: { $ref: '#' } })
    expect(validate([[[]]])).toBeUndefined()
    expect(validate([[1]])).toBe('$[0][0]: must be array')
    let deep: unknown[] = []
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(validate(deep)).toMatch(/^\$: could not be validated \(Maximum call stack size exceeded\)$/)
  })

  it('compiles schemas sharing a $id, one after the other (a tool changed and was reloaded)', () => {
    for (let i = 0; i < 3; i++) {
      const schema = {
        $id: 'urn:tool:event',
        description: `version ${i}`,
        type: 'object',
        properties: { n: { $id: 'urn:tool:n', type: 'number', minimum: i } },
      }
      expect(compileEventSchema(schema)({ n: 'x' })).toBe('$.n: must be number')
      expect(compileEventSchema(schema)({ n: i - 1 })).toBe(`$.n: must be >= ${i}`)
    }
  })

  it('compiles a schema once and shares the validator for the same schema text', () => {
    const schema = { type: 'object', properties: { shared: { type: 'string' } } }
    expect(compileEventSchema(schema)).toBe(compileEventSchema(structuredClone(schema)))
    expect(compileEventSchema(schema)).not.toBe(compileEventSchema({ ...schema, required: ['shared'] }))
  })
})
