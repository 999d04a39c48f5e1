/**
 * renderCall checks every value against what the model was shown before anything runs: types
 * (with the coercions of decision 0009), unknown keys, and values that would be read as options.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ArgumentError, DescribeErrorCodes } from './errors.js'
import { renderCall } from './render.js'
import type { ArgMode, ArgSpec, BackingType } from './types.js'

function spec(
  name: string,
  backingType: BackingType,
  mode: ArgMode = 'dashdashequal',
  extra: { required?: boolean; allowDash?: boolean } = {},
): ArgSpec {
  const required = extra.required ?? true
  return {
    name,
    description: `the ${name}`,
    type: backingType,
    backingType,
    arity: required ? 'single' : 'optional',
    required,
    mode,
    ...(extra.allowDash ? { allowDash: true } : {}),
  }
}

function refusal(args: readonly ArgSpec[], values: unknown): ArgumentError {
  try {
    renderCall(args, values)
  } catch (error) {
    expect(ArgumentError.is(error)).toBe(true)
    expect((error as ArgumentError).code).toBe(DescribeErrorCodes.BAD_ARGUMENT)
    return error as ArgumentError
  }
  throw new Error('renderCall did not throw')
}

const one = (arg: ArgSpec, value: unknown): readonly string[] => renderCall([arg], { [arg.name]: value }).argv

describe('decision 0009: what counts as a value of each backing type', () => {
  it.each<[BackingType, unknown, string]>([
    ['integer', 3, '3'],
    ['integer', '3', '3'],
    ['integer', '-3', '-3'],
    ['integer', '1e2', '100'],
    ['integer', 3.0, '3'],
    ['integer', Number.MAX_SAFE_INTEGER, '9007199254740991'],
    ['integer', -Number.MAX_SAFE_INTEGER, '-9007199254740991'],
    ['number', 1.5, '1.5'],
    ['number', '1.50', '1.5'],
    ['number', '-0.25', '-0.25'],
    ['number', 1e21, '1e+21'],
    ['boolean', true, 'true'],
    ['boolean', 'false', 'false'],
    ['string', 'text', 'text'],
    ['string', 3, '3'],
    ['string', false, 'false'],
  ])('%s accepts %j as %s', (backingType, value, text) => {
    expect(one(spec('v', backingType), value)).toEqual(['run', `--v=${text}`])
  })

  const list = (type: BackingType) => `; the arguments are "v" (${type}, required)`
  const unsafe = 'expected an integer from -9007199254740991 to 9007199254740991 (beyond, digits are lost)'

  it.each<[BackingType, unknown, string]>([
    ['integer', 'three', 'expected an integer; got "three"'],
    ['integer', '3.5', 'expected an integer; got "3.5"'],
    ['integer', 3.5, 'expected an integer; got 3.5'],
    ['integer', ' 3', 'expected an integer; got " 3"'],
    ['integer', '+3', 'expected an integer; got "+3"'],
    ['integer', '0x10', 'expected an integer; got "0x10"'],
    ['integer', '', 'expected an integer; got ""'],
    ['integer', true, 'expected an integer; got true'],
    ['integer', 2 ** 53, `${unsafe}; got 9007199254740992`],
    ['integer', '9007199254740993', `${unsafe}; got "9007199254740993"`],
    ['integer', 1e21, `${unsafe}; got 1e+21`],
    ['number', 'abc', 'expected a number; got "abc"'],
    ['number', '1e999', 'expected a number; got "1e999"'],
    ['number', 'NaN', 'expected a number; got "NaN"'],
    ['number', [1], 'expected a number; got an array'],
    ['boolean', 'True', 'expected a boolean (true or false); got "True"'],
    ['boolean', 'yes', 'expected a boolean (true or false); got "yes"'],
    ['boolean', 1, 'expected a boolean (true or false); got 1'],
    ['string', { a: 1 }, 'expected a string; got an object'],
  ])('%s refuses %j', (backingType, value, reason) => {
    const error = refusal([spec('v', backingType)], { v: value })
    expect(error.message).toBe(`argument "v": ${reason}${list(backingType)}`)
    expect(error.argument).toBe('v')
  })
})

describe('keys the schema does not have', () => {
  const args = [spec('times', 'integer'), spec('path', 'string', 'positional', { required: false })]
  const list = '; the arguments are "times" (integer, required), "path" (string, optional)'

  it('refuses an unknown key, with the argument it probably meant', () => {
    const error = refusal(args, { times: 3, tims: 3 })
    expect(error.message).toBe(`argument "tims": no such argument (did you mean "times"?)${list}`)
    expect(error.argument).toBe('tims')
  })

  it('refuses an unknown key that resembles no argument, and an inherited name sent as an own key', () => {
    expect(refusal(args, { times: 3, colour: 'red' }).message).toBe(
      `argument "colour": no such argument${list}`,
    )
    expect(refusal(args, JSON.parse('{"times":3,"__proto__":"x"}')).message).toBe(
      `argument "__proto__": no such argument${list}`,
    )
  })

  it('lists every problem of one call, unknown keys first, and names no single argument', () => {
    const error = refusal(args, { tims: 3, times: 'three' })
    expect(error.message).toBe(
      'argument "tims": no such argument (did you mean "times"?); argument "times": expected an integer; got "three"' +
        list,
    )
    expect(error.argument).toBeUndefined()
  })

  it('bounds the list: five problems, then how many more', () => {
    const values = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((key) => [key, 1]))
    expect(refusal([], values).message).toBe(
      'argument "a": no such argument; argument "b": no such argument; argument "c": no such argument; ' +
        'argument "d": no such argument; argument "e": no such argument; and 2 more; this tool takes no arguments',
    )
  })

  it('quotes a long key cut short', () => {
    const key = 'k'.repeat(100_000)
    expect(refusal([], { [key]: 1 }).message).toBe(
      `argument "${'k'.repeat(60)}"…: no such argument; this tool takes no arguments`,
    )
  })

  it('still renders a call with every key known', () => {
    expect(renderCall(args, { times: '2', path: 'a' }).argv).toEqual(['run', '--times=2', 'a'])
  })
})

describe('values that would reach argv as an option', () => {
  const refused = (text: string) =>
    `${JSON.stringify(text)} starts with "-", which the tool would read as an option; this argument does not accept values that start with "-"`

  it.each<[ArgMode, string]>([
    ['positional', '--help'],
    ['positional', '-rf'],
    ['positional', '-'],
    ['dashdashspace', '--output=x'],
    ['dashdashspace', '-v'],
  ])('refuses a %s value %j', (mode, value) => {
    const error = refusal([spec('p', 'string', mode)], { p: value })
    expect(error.message).toBe(`argument "p": ${refused(value)}`)
  })

  it('refuses a negative number for a string argument (it is not a numeric one)', () => {
    expect(refusal([spec('p', 'string', 'positional')], { p: -5 }).message).toBe(
      `argument "p": ${refused('-5')}`,
    )
  })

  it('passes a negative number for a numeric argument, sent as a number or as a string', () => {
    expect(one(spec('n', 'integer', 'positional'), -5)).toEqual(['run', '-5'])
    expect(one(spec('n', 'integer', 'positional'), '-5')).toEqual(['run', '-5'])
    expect(one(spec('x', 'number', 'dashdashspace'), -0.5)).toEqual(['run', '--x', '-0.5'])
  })

  it('passes a leading "-" where it cannot be an option: dashdashequal, stdin, env', () => {
    const args = [
      spec('e', 'string', 'dashdashequal'),
      spec('i', 'string', 'stdin'),
      spec('v', 'string', 'env'),
    ]
    const call = renderCall(args, { e: '--x', i: '-i', v: '-v' })
    expect(call.argv).toEqual(['run', '--e=--x'])
    expect(new TextDecoder().decode(call.stdin)).toBe('-i\n')
    expect(call.env).toEqual({ V: '-v' })
  })

  it('passes it when the argument declares allow_dash', () => {
    const args = [
      spec('p', 'string', 'positional', { allowDash: true }),
      spec('s', 'string', 'dashdashspace', { allowDash: true }),
    ]
    expect(renderCall(args, { p: '-rf', s: '--help' }).argv).toEqual(['run', '-rf', '--s', '--help'])
  })

  it('passes a "-" that is not the first character', () => {
    expect(one(spec('p', 'string', 'positional'), 'a-b')).toEqual(['run', 'a-b'])
  })
})

describe('on arbitrary calls', { timeout: 30_000 }, () => {
  const argSpec: fc.Arbitrary<ArgSpec> = fc
    .record({
      name: fc.stringMatching(/^[a-z][a-z_-]{0,6}$/),
      backingType: fc.constantFrom<BackingType>('string', 'number', 'integer', 'boolean'),
      mode: fc.constantFrom<ArgMode>('positional', 'dashdashspace'),
      required: fc.boolean(),
    })
    .map(({ name, backingType, mode, required }) => spec(name, backingType, mode, { required }))

  it('renders no key the schema lacks, and no non-numeric value that starts with "-"', () => {
    fc.assert(
      fc.property(
        fc
          .uniqueArray(argSpec, { selector: (a) => a.name, minLength: 1, maxLength: 5 })
          .chain((args) =>
            fc.tuple(
              fc.constant(args),
              fc.dictionary(
                fc.constantFrom(...args.map((a) => a.name), 'stray'),
                fc.oneof(
                  fc.jsonValue({ maxDepth: 0 }),
                  fc.constantFrom('-', '--help', '-rf', '-3', '3', 'true'),
                ),
              ),
            ),
          ),
        ([args, values]) => {
          let argv: readonly string[]
          try {
            argv = renderCall(args, values).argv
          } catch (error) {
            expect(ArgumentError.is(error)).toBe(true)
            return
          }
          for (const key of Object.keys(values)) expect(args.map((a) => a.name)).toContain(key)
          const flags = new Map(args.map((a) => [`--${a.name}`, a]))
          const positionals = args.filter((a) => a.mode === 'positional' && values[a.name] != null)
          for (let i = 1; i < argv.length; i++) {
            const flag = flags.get(argv[i] ?? '')
            const arg = flag?.mode === 'dashdashspace' ? flag : positionals.shift()
            const value = flag?.mode === 'dashdashspace' ? argv[++i] : argv[i]
            if (arg?.backingType === 'string' || arg?.backingType === 'boolean') {
              expect(value?.startsWith('-')).toBe(false)
            }
          }
        },
      ),
      { numRuns: 500 },
    )
  })
})
