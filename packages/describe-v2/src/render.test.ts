import { describe, expect, it } from 'vitest'
import { ArgumentError, DescribeErrorCodes } from './errors.js'
import { inputSchema, renderCall } from './render.js'
import type { ArgMode, ArgSpec, BackingType } from './types.js'

function spec(name: string, mode: ArgMode, required = true, backingType: BackingType = 'string'): ArgSpec {
  return {
    name,
    description: `the ${name}`,
    type: 'string',
    backingType,
    arity: required ? 'single' : 'optional',
    required,
    mode,
  }
}

const bytes = (text: string) => new TextEncoder().encode(text)

function argumentError(run: () => unknown): ArgumentError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ArgumentError)
    expect((error as ArgumentError).code).toBe(DescribeErrorCodes.BAD_ARGUMENT)
    return error as ArgumentError
  }
  throw new Error('renderCall did not throw')
}

describe('renderCall: one mode at a time', () => {
  it.each<[ArgMode, string[], string, Record<string, string>]>([
    ['positional', ['run', 'a b'], '', {}],
    ['dashdashspace', ['run', '--value', 'a b'], '', {}],
    ['dashdashequal', ['run', '--value=a b'], '', {}],
    ['stdin', ['run'], 'a b\n', {}],
    ['env', ['run'], '', { VALUE: 'a b' }],
  ])('%s', (mode, argv, stdin, env) => {
    const call = renderCall([spec('value', mode)], { value: 'a b' })
    expect(call.argv).toEqual(argv)
    expect(call.stdin).toEqual(bytes(stdin))
    expect(call.env).toEqual(env)
  })
})

describe('renderCall: a whole call', () => {
  const args = [
    spec('first', 'positional'),
    spec('title', 'dashdashspace'),
    spec('count', 'dashdashequal', false, 'integer'),
    spec('body', 'stdin'),
    spec('api-token', 'env'),
    spec('last', 'positional', false),
    spec('notes', 'stdin', false),
  ]

  it('keeps describe order, not the order of the values', () => {
    const call = renderCall(args, {
      notes: 'n1',
      last: 'z',
      'api-token': 's3cret',
      body: 'line one\nline two',
      count: 3,
      title: 't',
      first: 'a',
    })
    expect(call).toEqual({
      argv: ['run', 'a', '--title', 't', '--count=3', 'z'],
      stdin: bytes('line one\nline two\nn1\n'),
      env: { API_TOKEN: 's3cret' },
    })
  })

  it('leaves out optional arguments that are missing or null', () => {
    const call = renderCall(args, {
      first: 'a',
      title: 't',
      body: 'b',
      'api-token': 'k',
      count: null,
      notes: null,
    })
    expect(call).toEqual({ argv: ['run', 'a', '--title', 't'], stdin: bytes('b\n'), env: { API_TOKEN: 'k' } })
  })

  it('shifts a later positional into the place of an omitted optional one (v1)', () => {
    const shifted = [spec('a', 'positional', false), spec('b', 'positional', false), spec('c', 'positional')]
    expect(renderCall(shifted, { a: '1', b: '2', c: '3' }).argv).toEqual(['run', '1', '2', '3'])
    expect(renderCall(shifted, { b: '2', c: '3' }).argv).toEqual(['run', '2', '3'])
    expect(renderCall(shifted, { c: '3' }).argv).toEqual(['run', '3'])
  })

  it('passes an empty string', () => {
    const call = renderCall(
      [
        spec('p', 'positional'),
        spec('s', 'dashdashspace'),
        spec('e', 'dashdashequal'),
        spec('i', 'stdin'),
        spec('v', 'env'),
      ],
      { p: '', s: '', e: '', i: '', v: '' },
    )
    expect(call).toEqual({ argv: ['run', '', '--s', '', '--e='], stdin: bytes('\n'), env: { V: '' } })
  })

  it('closes stdin at once (no bytes) when there is no stdin value', () => {
    const call = renderCall([spec('body', 'stdin', false)], {})
    expect(call.stdin).toBeInstanceOf(Uint8Array)
    expect(call.stdin.byteLength).toBe(0)
  })

  it('encodes stdin as UTF-8', () => {
    expect([...renderCall([spec('t', 'stdin')], { t: 'é→😀' }).stdin]).toEqual([
      0xc3, 0xa9, 0xe2, 0x86, 0x92, 0xf0, 0x9f, 0x98, 0x80, 0x0a,
    ])
  })

  it('renders numbers and booleans as their JSON text', () => {
    const call = renderCall(
      [
        spec('i', 'positional'),
        spec('f', 'dashdashequal'),
        spec('neg', 'dashdashspace', true, 'number'),
        spec('big', 'positional'),
        spec('yes', 'dashdashequal'),
        spec('no', 'env'),
        spec('n', 'stdin'),
      ],
      { i: 42, f: 1.5, neg: -0.25, big: 1e21, yes: true, no: false, n: 0 },
    )
    expect(call).toEqual({
      argv: ['run', '42', '--f=1.5', '--neg', '-0.25', '1e+21', '--yes=true'],
      stdin: bytes('0\n'),
      env: { NO: 'false' },
    })
  })

  it('puts a sub-command right after run', () => {
    const call = renderCall(
      [spec('n', 'positional'), spec('follow', 'dashdashequal', false)],
      { n: 5 },
      { command: 'tail' },
    )
    expect(call.argv).toEqual(['run', 'tail', '5'])
  })

  it('accepts no values at all when nothing is required', () => {
    expect(renderCall([spec('o', 'positional', false)], undefined)).toEqual({
      argv: ['run'],
      stdin: bytes(''),
      env: {},
    })
    expect(renderCall([], undefined, { command: 'stats' }).argv).toEqual(['run', 'stats'])
  })

  it('reads own keys only: inherited names are missing', () => {
    const inherited = [spec('toString', 'positional', false), spec('__proto__', 'dashdashspace', false)]
    expect(renderCall(inherited, {}).argv).toEqual(['run'])
    expect(renderCall(inherited, JSON.parse('{"toString":"t","__proto__":"p"}')).argv).toEqual([
      'run',
      't',
      '--__proto__',
      'p',
    ])
  })

  it('passes NUL through stdin', () => {
    expect(renderCall([spec('raw', 'stdin')], { raw: 'a\0b' }).stdin).toEqual(bytes('a\0b\n'))
  })
})

describe('renderCall: ArgumentError', () => {
  it.each<[string, ArgSpec, unknown, string]>([
    ['a missing required argument', spec('x', 'positional'), {}, 'argument "x": required, missing'],
    ['a null required argument', spec('x', 'dashdashspace'), { x: null }, 'argument "x": required, got null'],
    [
      'an object',
      spec('opts', 'dashdashequal', false),
      { opts: { a: 1 } },
      'argument "opts": expected a string; got an object; the arguments are "opts" (string, optional)',
    ],
    [
      'an array',
      spec('tags', 'stdin', false),
      { tags: ['a'] },
      'argument "tags": expected a string; got an array; the arguments are "tags" (string, optional)',
    ],
    ['NaN', spec('n', 'positional'), { n: Number.NaN }, 'argument "n": expected a finite number; got NaN'],
    [
      'Infinity',
      spec('n', 'env'),
      { n: Number.POSITIVE_INFINITY },
      'argument "n": expected a finite number; got Infinity',
    ],
    [
      'a bigint',
      spec('n', 'positional'),
      { n: 10n },
      'argument "n": expected a string; got a bigint; the arguments are "n" (string, required)',
    ],
    [
      'NUL in argv',
      spec('p', 'positional'),
      { p: 'a\0b' },
      'argument "p": contains a NUL character, which cannot be passed by positional',
    ],
    [
      'NUL in env',
      spec('p', 'env'),
      { p: '\0' },
      'argument "p": contains a NUL character, which cannot be passed by env',
    ],
  ])('refuses %s', (_, arg, values, message) => {
    const error = argumentError(() => renderCall([arg], values))
    expect(error.message).toBe(message)
    expect(error.argument).toBe(arg.name)
  })

  it.each<[unknown, string]>([
    [null, 'null'],
    [['a'], 'an array'],
    ['a', '"a"'],
    [3, '3'],
    [new Map(), 'an object'],
  ])('refuses values %o that are not a JSON object', (values, shown) => {
    const error = argumentError(() => renderCall([spec('o', 'positional', false)], values))
    expect(error.message).toBe(`the arguments must be a JSON object; got ${shown}`)
    expect(error.argument).toBeUndefined()
  })

  it('accepts an object without prototype', () => {
    const values = Object.assign(Object.create(null) as Record<string, unknown>, { a: 'x' })
    expect(renderCall([spec('a', 'positional')], values).argv).toEqual(['run', 'x'])
  })
})

describe('inputSchema', () => {
  it('types each argument by its backing type and requires the single ones', () => {
    expect(
      inputSchema([
        spec('path', 'dashdashspace'),
        spec('lines', 'dashdashequal', false, 'integer'),
        spec('ratio', 'env', true, 'number'),
        spec('follow', 'stdin', false, 'boolean'),
      ]),
    ).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the path' },
        lines: { type: 'integer', description: 'the lines' },
        ratio: { type: 'number', description: 'the ratio' },
        follow: { type: 'boolean', description: 'the follow' },
      },
      required: ['path', 'ratio'],
      additionalProperties: false,
    })
  })

  it('is an empty object schema for no arguments', () => {
    expect(inputSchema([])).toEqual({
      type: 'object',
      properties: {},
      required: [],
      additionalProperties: false,
    })
  })

  it('keeps an argument named __proto__ as an own property', () => {
    const schema = inputSchema([spec('__proto__', 'dashdashspace')])
    expect(Object.keys(schema.properties)).toEqual(['__proto__'])
    expect(JSON.stringify(schema)).toBe(
      '{"type":"object","properties":{"__proto__":{"type":"string","description":"the __proto__"}},"required":["__proto__"],"additionalProperties":false}',
    )
  })
})
