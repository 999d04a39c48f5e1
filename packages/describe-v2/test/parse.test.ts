import { describe, expect, it } from 'vitest'
import { DescribeErrorCodes, LoadingError } from '../src/errors.js'
import { parseDescribe } from '../src/parse.js'
import type { ToolSpec } from '../src/types.js'
import {
  arg,
  fixture,
  jsonParseMessage,
  richV2,
  TOOL,
  v1,
  v2,
  withProcess,
  withRuntime,
} from './documents.js'

const codes = DescribeErrorCodes

function load(document: unknown, tool = TOOL): ToolSpec {
  return parseDescribe(JSON.stringify(document), tool)
}

function failure(stdout: unknown, tool = TOOL): LoadingError {
  const input = typeof stdout === 'string' || stdout instanceof Uint8Array ? stdout : JSON.stringify(stdout)
  try {
    parseDescribe(input, tool)
  } catch (error) {
    expect(error).toBeInstanceOf(LoadingError)
    return error as LoadingError
  }
  throw new Error('parseDescribe did not throw')
}

function expectFailure(document: unknown, code: string, field: string | undefined, reason: string): void {
  const error = failure(document)
  expect({ code: error.code, field: error.field, reason: error.reason }).toEqual({ code, field, reason })
  expect(error.tool).toBe(TOOL)
  expect(error.message).toBe(`${TOOL}: ${field === undefined ? '' : `${field}: `}${reason}`)
}

describe('v1 documents (agents-exe style)', () => {
  it('loads positional arguments with every v1 default', () => {
    const spec = parseDescribe(fixture('v1-write-file.json'), '/srv/agent/tools/write-file')
    expect(spec).toEqual({
      path: '/srv/agent/tools/write-file',
      dir: '/srv/agent/tools',
      protocol: 1,
      slug: 'write-file',
      description: 'Writes content to a file, then checks it.',
      args: [
        {
          name: 'filepath',
          description: 'the file to write',
          type: 'filepath',
          backingType: 'string',
          arity: 'single',
          required: true,
          mode: 'positional',
        },
        {
          name: 'content',
          description: 'what to write',
          type: 'text',
          backingType: 'string',
          arity: 'single',
          required: true,
          mode: 'positional',
        },
        {
          name: 'check_action',
          description: 'compile or skip',
          type: 'string',
          backingType: 'string',
          arity: 'single',
          required: true,
          mode: 'positional',
        },
      ],
      check: false,
      help: false,
      commands: [],
      process: {
        mode: 'oneshot',
        output: { framing: 'chunks' },
        digest: { per: 'round' },
        ready: { kind: 'exit' },
      },
      runtime: { environment: {}, timeout: {}, onExit: 'report', cancel: { signal: 'SIGTERM' } },
      warnings: [],
    })
    expect('emptyResult' in spec).toBe(false)
    expect('input' in spec.process).toBe(false)
  })

  it('keeps a stdin argument and ignores unknown top-level keys (output-media-type)', () => {
    const spec = parseDescribe(fixture('v1-create-issue.json'), '/t/create-issue')
    expect(spec.args.map((a) => [a.name, a.mode, a.type])).toEqual([
      ['owner', 'positional', 'string'],
      ['repo', 'positional', 'string'],
      ['title', 'positional', 'string'],
      ['labels', 'positional', 'string'],
      ['assignee', 'positional', 'string'],
      ['body', 'stdin', 'text'],
    ])
    expect(spec).not.toHaveProperty('output-media-type')
  })

  it('reads optional flags and an AddMessage empty-result', () => {
    const spec = parseDescribe(fixture('v1-ask-user.json'), '/t/ask-user')
    expect(spec.args.map((a) => [a.name, a.required])).toEqual([
      ['type', true],
      ['text', true],
      ['title', false],
      ['default', false],
      ['options', false],
      ['multiple', false],
    ])
    expect(spec.args[5]?.type).toBe('boolean')
    expect(spec.args[5]?.backingType).toBe('string')
    expect(spec.emptyResult).toEqual({ tag: 'AddMessage', contents: 'the user did not answer' })
    expect(spec.warnings).toEqual([])
  })

  it('reads an integer backing type and a DoNothing empty-result', () => {
    const spec = parseDescribe(fixture('v1-tmux-record.json'), '/t/tmux-record')
    expect(spec.args[1]).toMatchObject({ name: 'lines', backingType: 'integer', required: false })
    expect(spec.emptyResult).toEqual({ tag: 'DoNothing' })
    // The optional positional comes last: nothing can shift, so no warning.
    expect(spec.warnings).toEqual([])
  })

  it('treats "protocol": 1 like no protocol', () => {
    expect(load(v1({ protocol: 1 }))).toEqual(load(v1()))
    expect(load(v1({ protocol: 1 })).protocol).toBe(1)
  })

  it('ignores every v2 field, however broken, in a v1 document', () => {
    const spec = load(
      v1({ process: 'stream', runtime: 7, commands: { a: 1 }, check: 'yes', help: null, extra: [1, 2] }),
    )
    expect(spec.process).toEqual({
      mode: 'oneshot',
      output: { framing: 'chunks' },
      digest: { per: 'round' },
      ready: { kind: 'exit' },
    })
    expect(spec.runtime).toEqual({
      environment: {},
      timeout: {},
      onExit: 'report',
      cancel: { signal: 'SIGTERM' },
    })
    expect([spec.check, spec.help, spec.commands]).toEqual([false, false, []])
  })

  it('ignores unknown keys inside argument objects and empty-result', () => {
    const spec = load(
      v1({
        args: [arg({ tier: 'advanced', default: 3 })],
        'empty-result': { tag: 'DoNothing', contents: 'x' },
      }),
    )
    expect(Object.keys(spec.args[0] ?? {})).toEqual([
      'name',
      'description',
      'type',
      'backingType',
      'arity',
      'required',
      'mode',
    ])
    expect(spec.emptyResult).toEqual({ tag: 'DoNothing' })
  })

  it('accepts bytes, a UTF-8 BOM, surrounding whitespace and non-ASCII text', () => {
    const text = JSON.stringify(v1({ description: 'Lit un fichier — vite' }))
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(`\n ${text}\n\n`)])
    expect(parseDescribe(bom, TOOL).description).toBe('Lit un fichier — vite')
    expect(parseDescribe(`\uFEFF${text}`, TOOL).description).toBe('Lit un fichier — vite')
  })

  it('accepts an empty args list and an empty description', () => {
    expect(load(v1({ args: [], description: '' })).args).toEqual([])
  })
})

describe('the v2 document of the seed (§1)', () => {
  it('loads with every field normalised', () => {
    const spec = parseDescribe(fixture('v2-log-watcher.json'), '/opt/tools/log_watcher')
    const { output, input, ...process } = spec.process
    expect(spec).toMatchObject({
      path: '/opt/tools/log_watcher',
      dir: '/opt/tools',
      protocol: 2,
      slug: 'log_watcher',
      check: true,
      help: false,
      commands: [],
      warnings: [],
    })
    expect(process).toEqual({
      mode: 'stream',
      digest: { per: 'round' },
      ready: { kind: 'line', match: '^ready$', regex: /^ready$/ },
    })
    expect(output.framing).toBe('jsonl')
    expect(output.event).toEqual({
      type: 'object',
      properties: { line: { type: 'string' }, level: { type: 'string' } },
      required: ['line'],
    })
    expect(output.validate?.({ line: 'x', level: 'error' })).toBeUndefined()
    expect(output.validate?.({ line: 'x', level: 3 })).toBe('$.level: must be string')
    expect(output.validate?.({ level: 'error' })).toBe("$: must have required property 'line'")
    expect(input?.framing).toBe('jsonl')
    expect(input?.validate?.({ op: 'pause' })).toBeUndefined()
    expect(input?.validate?.({ op: 'stop' })).toBe(
      '$.op: must be equal to one of the allowed values: "pattern", "pause", "resume"',
    )
    expect(spec.runtime).toEqual({
      runAs: { user: 'logs', group: 'logs' },
      sandbox: {
        fs: { read: ['/var/log'], write: ['state'] },
        net: 'none',
        tmp: 'shared',
        declared: ['fs.read', 'fs.write', 'net'],
      },
      envdir: 'env',
      environment: { LC_ALL: 'C' },
      rundir: 'state',
      timeout: { start: 10, stop: 5, idle: null },
      onExit: 'report',
      cancel: { signal: 'SIGTERM' },
    })
  })

  it('loads a document that uses every field', () => {
    const spec = load(richV2(), '/opt/tools/log_watcher')
    expect(spec.commands).toEqual([
      {
        name: 'tail',
        internalName: 'log_watcher.tail',
        description: 'last lines',
        args: [
          {
            name: 'n',
            description: 'the file to read',
            type: 'filepath',
            backingType: 'number',
            arity: 'single',
            required: true,
            mode: 'positional',
          },
        ],
      },
      { name: 'stats', internalName: 'log_watcher.stats', description: 'counters', args: [] },
    ])
    expect(spec.process.mode).toBe('service')
    expect(spec.process.digest).toEqual({ per: 'events', n: 10 })
    expect(spec.process.ready).toMatchObject({ kind: 'line', match: '^ready( on \\d+)?$' })
    expect(spec.runtime.cancel).toEqual({ send: { op: 'quit' } })
    expect(spec.runtime.onExit).toBe('restart')
    expect(spec.runtime.sandbox?.declared).toEqual(['fs.read', 'fs.write', 'net', 'tmp'])
    expect(spec.emptyResult).toEqual({ tag: 'AddMessage', contents: 'nothing yet' })
    expect([spec.check, spec.help]).toEqual([true, true])
  })
})

describe('v2 defaults', () => {
  it('runs a v2 tool without process as a v1 oneshot (chunks)', () => {
    const spec = load(v2())
    expect(spec.protocol).toBe(2)
    expect(spec.process).toEqual({
      mode: 'oneshot',
      output: { framing: 'chunks' },
      digest: { per: 'round' },
      ready: { kind: 'exit' },
    })
    expect(spec.runtime).toEqual({
      environment: {},
      timeout: {},
      onExit: 'report',
      cancel: { signal: 'SIGTERM' },
    })
    expect([spec.check, spec.help, spec.commands]).toEqual([false, false, []])
  })

  it.each([
    ['oneshot', { kind: 'exit' }],
    ['stream', { kind: 'immediate' }],
    ['service', { kind: 'immediate' }],
  ])('a declared %s process frames jsonl and is ready at %o by default', (mode, ready) => {
    expect(load(withProcess({ mode })).process).toEqual({
      mode,
      output: { framing: 'jsonl' },
      digest: { per: 'round' },
      ready,
    })
  })

  it('defaults process.mode to oneshot and input.framing to jsonl', () => {
    const { process } = load(withProcess({ input: {} }))
    expect(process.mode).toBe('oneshot')
    expect(process.input).toEqual({ framing: 'jsonl' })
  })

  it('keeps the declared framings, digest and ready kinds', () => {
    const process = load(
      withProcess({
        mode: 'service',
        output: { framing: 'lines' },
        input: { framing: 'lines' },
        digest: { per: 'seconds', n: 0.5 },
        ready: { kind: 'exit' },
      }),
    ).process
    expect(process).toEqual({
      mode: 'service',
      output: { framing: 'lines' },
      input: { framing: 'lines' },
      digest: { per: 'seconds', n: 0.5 },
      ready: { kind: 'exit' },
    })
    expect(load(withProcess({ digest: { per: 'round', n: 3 } })).process.digest).toEqual({ per: 'round' })
    expect(load(withProcess({ ready: { kind: 'immediate' } })).process.ready).toEqual({ kind: 'immediate' })
  })

  it('compiles ready.match with new RegExp, no flags', () => {
    const ready = load(withProcess({ ready: { kind: 'line', match: '^listening on (\\d+)$' } })).process.ready
    expect(ready.kind === 'line' && ready.regex.test('listening on 8080')).toBe(true)
    expect(ready.kind === 'line' && ready.regex.flags).toBe('')
  })

  it('accepts boolean event schemas', () => {
    const { process } = load(withProcess({ output: { event: true }, input: { event: false } }))
    expect(process.output.validate?.({ anything: 1 })).toBeUndefined()
    expect(process.input?.validate?.('x')).toBe('$: boolean schema is false')
  })

  it('records which sandbox fields the document named', () => {
    const sandbox = (declared: unknown) => load(withRuntime({ sandbox: declared })).runtime.sandbox
    expect(sandbox({})).toEqual({ fs: { read: [], write: [] }, net: 'host', tmp: 'shared', declared: [] })
    expect(sandbox({ fs: {} })?.declared).toEqual([])
    expect(sandbox({ fs: { read: [] } })?.declared).toEqual(['fs.read'])
    expect(sandbox({ fs: { write: ['out'] } })).toEqual({
      fs: { read: [], write: ['out'] },
      net: 'host',
      tmp: 'shared',
      declared: ['fs.write'],
    })
    expect(sandbox({ net: 'host', tmp: 'private' })).toEqual({
      fs: { read: [], write: [] },
      net: 'host',
      tmp: 'private',
      declared: ['net', 'tmp'],
    })
  })

  it('reads a net allow list, its absent parts empty and each published port once', () => {
    const sandbox = (net: unknown) => load(withRuntime({ sandbox: { net } })).runtime.sandbox
    expect(
      sandbox({
        allow: ['registry.npmjs.org', '*.github.com', '10.0.0.5:5432'],
        publish: [3000, 3000, 8080],
      }),
    ).toEqual({
      fs: { read: [], write: [] },
      net: {
        allow: ['registry.npmjs.org', '*.github.com', '10.0.0.5:5432'],
        deny: [],
        publish: [3000, 8080],
      },
      tmp: 'shared',
      declared: ['net'],
    })
    expect(sandbox({})?.net).toEqual({ allow: [], deny: [], publish: [] })
  })

  it('keeps only the timeouts that were declared', () => {
    expect(load(withRuntime({ timeout: {} })).runtime.timeout).toEqual({})
    expect(load(withRuntime({ timeout: { stop: 0 } })).runtime.timeout).toEqual({ stop: 0 })
    expect(load(withRuntime({ timeout: { idle: null } })).runtime.timeout).toEqual({ idle: null })
    expect(load(withRuntime({ timeout: { start: 0.5, idle: 30 } })).runtime.timeout).toEqual({
      start: 0.5,
      idle: 30,
    })
  })

  it('reads run_as without a group, the environment with any own key, rundir and cancel', () => {
    const runtime = load(
      v2({
        runtime: JSON.parse(
          '{"run_as":{"user":"1001"},"environment":{"__proto__":"x","A":""},"rundir":"a/../b","cancel":"SIGINT"}',
        ),
      }),
    ).runtime
    expect(runtime.runAs).toEqual({ user: '1001' })
    expect(Object.hasOwn(runtime.environment, '__proto__')).toBe(true)
    expect(Object.entries(runtime.environment)).toEqual([
      ['__proto__', 'x'],
      ['A', ''],
    ])
    expect(runtime.rundir).toBe('a/../b')
    expect(runtime.cancel).toEqual({ signal: 'SIGINT' })
    expect(load(withRuntime({ rundir: '.' })).runtime.rundir).toBe('.')
    expect(load(withRuntime({ cancel: 'SIGTERM' })).runtime.cancel).toEqual({ signal: 'SIGTERM' })
  })

  it('accepts a cancel event that matches input.event, or any event when none is declared', () => {
    const input = { event: { type: 'object', required: ['op'] } }
    expect(load(withRuntime({ cancel: { send: { op: 'quit' } } }, { input })).runtime.cancel).toEqual({
      send: { op: 'quit' },
    })
    expect(load(withRuntime({ cancel: { send: null } }, { input: {} })).runtime.cancel).toEqual({
      send: null,
    })
    expect(
      load(withRuntime({ cancel: { send: 'quit' } }, { input: { framing: 'lines' } })).runtime.cancel,
    ).toEqual({
      send: 'quit',
    })
  })

  it('allows a command named send when the tool is not a service', () => {
    const spec = load(
      withProcess({ mode: 'stream' }, { commands: [{ name: 'send', description: 'd', args: [] }] }),
    )
    expect(spec.commands[0]?.internalName).toBe('reader.send')
  })

  it('allows the same argument name in two commands', () => {
    const command = (name: string) => ({ name, description: 'd', args: [arg()] })
    expect(load(v2({ commands: [command('a'), command('b')] })).commands).toHaveLength(2)
  })

  it('accepts slugs and command names of 64 characters', () => {
    const long = 'a'.repeat(64)
    expect(
      load(v2({ slug: long, commands: [{ name: long, description: 'd', args: [] }] })).commands[0]
        ?.internalName,
    ).toBe(`${long}.${long}`)
  })
})

describe('warnings', () => {
  it('maps an unsupported backing_type to string and names the argument', () => {
    const spec = load(v1({ args: [arg({ name: 'tags', backing_type: 'array' })] }))
    expect(spec.args[0]?.backingType).toBe('string')
    expect(spec.warnings).toEqual([
      '$.args[0].backing_type: "array" is not one of string, number, integer, boolean; argument "tags" is shown to the model as a string',
    ])
  })

  it('keeps the four supported backing types', () => {
    const types = ['string', 'number', 'integer', 'boolean']
    const spec = load(v1({ args: types.map((type) => arg({ name: type, backing_type: type })) }))
    expect(spec.args.map((a) => a.backingType)).toEqual(types)
    expect(spec.warnings).toEqual([])
  })

  it('warns when an optional positional comes before another positional', () => {
    const spec = load(
      v1({
        args: [
          arg({ name: 'first', mode: 'positional', arity: 'optional' }),
          arg({ name: 'flag', mode: 'dashdashspace', arity: 'optional' }),
          arg({ name: 'second', mode: 'positional' }),
          arg({ name: 'third', mode: 'positional', arity: 'optional' }),
        ],
      }),
    )
    expect(spec.warnings).toEqual([
      '$.args[0].arity: argument "first" is an optional positional before the positional "second"; when it is omitted, "second" takes its place (v1 behaviour): make it a flag or required',
    ])
  })

  it('names the command in warnings about its arguments', () => {
    const args = [
      arg({ name: 'a', mode: 'positional', arity: 'optional', backing_type: 'object' }),
      arg({ name: 'b', mode: 'positional' }),
    ]
    expect(load(v2({ commands: [{ name: 'go', description: 'd', args }] })).warnings).toEqual([
      '$.commands[0].args[0].backing_type: "object" is not one of string, number, integer, boolean; command "go": argument "a" is shown to the model as a string',
      '$.commands[0].args[0].arity: command "go": argument "a" is an optional positional before the positional "b"; when it is omitted, "b" takes its place (v1 behaviour): make it a flag or required',
    ])
  })

  it('ignores output.event outside jsonl framing, with a warning', () => {
    const spec = load(withProcess({ output: { framing: 'lines', event: { type: 'string' } } }))
    expect(spec.process.output).toEqual({ framing: 'lines' })
    expect(spec.warnings).toEqual([
      '$.process.output.event is ignored: events are validated under jsonl framing only (framing is "lines")',
    ])
  })

  it("keeps ajv's compile warnings (unknown formats) instead of printing them", () => {
    const event = { type: 'object', properties: { mail: { type: 'string', format: 'email' } } }
    const spec = load(withProcess({ output: { event }, input: { event } }))
    expect(spec.warnings).toEqual([
      '$.process.output.event: unknown format "email" ignored in schema at path "#/properties/mail"',
      '$.process.input.event: unknown format "email" ignored in schema at path "#/properties/mail"',
    ])
    expect(spec.process.output.validate?.({ mail: 'not an address' })).toBeUndefined()
  })
})

describe('DESCRIBE_ERR_NOT_JSON', () => {
  const expected = 'describe must print one JSON object on stdout'
  it.each([
    ['nothing', ''],
    ['no bytes', new Uint8Array()],
  ])('refuses %s', (_, stdout) => {
    expectFailure(stdout, codes.NOT_JSON, undefined, `${expected}; got nothing`)
  })

  it.each([
    ['a usage text', 'Usage: reader describe|run\n'],
    ['whitespace', ' \n\t'],
    ['trailing garbage', '{"slug":"reader"} trailing'],
    ['two documents', '{}\n{}'],
    ['JSON lines', '{"slug":"a"}\n{"slug":"b"}\n'],
    ['a truncated document', '{"slug": "reader", "args": ['],
  ])('refuses %s with an excerpt and the JSON error', (_, text) => {
    expectFailure(
      text,
      codes.NOT_JSON,
      undefined,
      `${expected}; got ${JSON.stringify(text)} (${jsonParseMessage(text)})`,
    )
  })

  it('cuts the excerpt to 80 characters', () => {
    const text = `Error: ${'x'.repeat(200)}`
    const error = failure(text)
    expect(error.reason).toBe(`${expected}; got "${text.slice(0, 80)}"… (${jsonParseMessage(text)})`)
  })

  it('refuses bytes that are not UTF-8, even inside a JSON string', () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"slug":"caf'),
      0xe9,
      ...new TextEncoder().encode('"}'),
    ])
    expectFailure(
      bytes,
      codes.NOT_JSON,
      undefined,
      `${expected}, encoded as UTF-8; got bytes that are not UTF-8: "{\\"slug\\":\\"caf\uFFFD\\"}"`,
    )
  })

  it('refuses what is neither text nor bytes', () => {
    let error: unknown
    try {
      parseDescribe(42 as unknown as string, TOOL)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(LoadingError)
    expect(error).toMatchObject({ code: codes.NOT_JSON, reason: `${expected}; got 42 instead of text` })
  })
})

describe('DESCRIBE_ERR_UNSUPPORTED_PROTOCOL', () => {
  it.each([
    [3, '3'],
    ['2', '"2"'],
    [null, 'null'],
    [0, '0'],
    [2.5, '2.5'],
    [true, 'true'],
    [[2], 'an array'],
  ])('refuses protocol %o', (protocol, shown) => {
    expectFailure(
      v2({ protocol }),
      codes.UNSUPPORTED_PROTOCOL,
      '$.protocol',
      `expected 1 or 2 (no protocol field means 1); got ${shown}`,
    )
  })

  it('checks the protocol before the other fields', () => {
    expect(failure({ protocol: 9 }).code).toBe(codes.UNSUPPORTED_PROTOCOL)
  })
})

const missingSlug = v1({ slug: undefined })
const letters = 'letters, digits, "_" or "-"'

describe('DESCRIBE_ERR_INVALID_FIELD: the document and v1 fields', () => {
  it.each<[string, unknown, string, string]>([
    ['an array document', [], '$', 'expected an object (the describe document); got an array'],
    ['a string document', '"text"', '$', 'expected an object (the describe document); got "text"'],
    ['a null document', null, '$', 'expected an object (the describe document); got null'],
    ['a missing slug', missingSlug, '$.slug', 'missing (expected a string)'],
    ['a numeric slug', v1({ slug: 7 }), '$.slug', 'expected a string; got 7'],
    [
      'an empty slug',
      v1({ slug: '' }),
      '$.slug',
      `expected 1 to 64 ${letters} ("." is reserved for slug.command); got ""`,
    ],
    [
      'a dotted slug',
      v1({ slug: 'log.watcher' }),
      '$.slug',
      `expected 1 to 64 ${letters} ("." is reserved for slug.command); got "log.watcher"`,
    ],
    [
      'a slug with a space',
      v1({ slug: 'a b' }),
      '$.slug',
      `expected 1 to 64 ${letters} ("." is reserved for slug.command); got "a b"`,
    ],
    [
      'a 65-character slug',
      v1({ slug: 's'.repeat(65) }),
      '$.slug',
      `expected at most 64 characters; got "${'s'.repeat(60)}"… (65 characters)`,
    ],
    ['a missing description', v1({ description: undefined }), '$.description', 'missing (expected a string)'],
    ['missing args', v1({ args: undefined }), '$.args', 'missing (expected an array)'],
    ['args as an object', v1({ args: { path: {} } }), '$.args', 'expected an array; got an object'],
    ['an arg that is a string', v1({ args: [arg(), 'x'] }), '$.args[1]', 'expected an object; got "x"'],
    [
      'a missing arg name',
      v1({ args: [arg({ name: undefined })] }),
      '$.args[0].name',
      'missing (expected a string)',
    ],
    [
      'a missing arg description',
      v1({ args: [arg({ description: undefined })] }),
      '$.args[0].description',
      'missing (expected a string)',
    ],
    [
      'a missing arg type',
      v1({ args: [arg({ type: undefined })] }),
      '$.args[0].type',
      'missing (expected a string)',
    ],
    [
      'a missing backing_type',
      v1({ args: [arg({ backing_type: undefined })] }),
      '$.args[0].backing_type',
      'missing (expected a string)',
    ],
    [
      'a missing arity',
      v1({ args: [arg({ arity: undefined })] }),
      '$.args[0].arity',
      'missing (expected one of single, optional)',
    ],
    [
      'a missing mode',
      v1({ args: [arg({ mode: undefined })] }),
      '$.args[0].mode',
      'missing (expected one of positional, dashdashspace, dashdashequal, stdin, env)',
    ],
    [
      'an unknown arity',
      v1({ args: [arg({ arity: 'many' })] }),
      '$.args[0].arity',
      'expected one of single, optional; got "many"',
    ],
    [
      'an unknown mode',
      v1({ args: [arg(), arg({ name: 'x', mode: 'flag' })] }),
      '$.args[1].mode',
      'expected one of positional, dashdashspace, dashdashequal, stdin, env; got "flag"',
    ],
    [
      'a JSON Schema type array',
      v1({ args: [arg({ backing_type: ['string', 'null'] })] }),
      '$.args[0].backing_type',
      'expected a string; got an array',
    ],
    ['a boolean type', v1({ args: [arg({ type: true })] }), '$.args[0].type', 'expected a string; got true'],
    [
      'an empty-result that is a string',
      v1({ 'empty-result': 'none' }),
      '$.empty-result',
      'expected an object; got "none"',
    ],
    [
      'an unknown empty-result tag',
      v1({ 'empty-result': { tag: 'Nope' } }),
      '$.empty-result.tag',
      'expected one of DoNothing, AddMessage; got "Nope"',
    ],
    [
      'an empty-result without tag',
      v1({ 'empty-result': {} }),
      '$.empty-result.tag',
      'missing (expected one of DoNothing, AddMessage)',
    ],
    [
      'AddMessage without contents',
      v1({ 'empty-result': { tag: 'AddMessage' } }),
      '$.empty-result.contents',
      'missing (expected a string)',
    ],
  ])('refuses %s', (_, document, field, reason) => {
    expectFailure(document, codes.INVALID_FIELD, field, reason)
  })

  const nameReason =
    'expected a non-empty name without "=", whitespace or NUL (it is used as --name and as an environment variable name)'
  it.each([
    ['', '""'],
    ['a=b', '"a=b"'],
    ['a b', '"a b"'],
    ['tab\there', '"tab\\there"'],
    ['line\n', '"line\\n"'],
    ['nul\u0000', '"nul\\u0000"'],
    ['nbsp\u00a0', '"nbsp\u00a0"'],
  ])('refuses the argument name %j', (name, shown) => {
    expectFailure(
      v1({ args: [arg({ name })] }),
      codes.INVALID_FIELD,
      '$.args[0].name',
      `${nameReason}; got ${shown}`,
    )
  })

  it('refuses a duplicate argument name at the second one', () => {
    expectFailure(
      v1({
        args: [arg({ name: 'path' }), arg({ name: 'other' }), arg({ name: 'path', mode: 'positional' })],
      }),
      codes.INVALID_FIELD,
      '$.args[2].name',
      'duplicate argument name "path" (first at $.args[0]); argument names must be unique',
    )
  })

  it('reports the first problem and lists the others, at most five', () => {
    expectFailure(
      { slug: 'a.b', args: [{ name: 'x', mode: 'flag' }] },
      codes.INVALID_FIELD,
      '$.slug',
      `expected 1 to 64 ${letters} ("." is reserved for slug.command); got "a.b" (and 6 other problems: ` +
        '$.description: missing (expected a string); $.args[0].description: missing (expected a string); ' +
        '$.args[0].type: missing (expected a string); $.args[0].backing_type: missing (expected a string); ' +
        '$.args[0].arity: missing (expected one of single, optional); and 1 more)',
    )
    expectFailure(
      v1({ description: 1, args: [arg({ mode: 'x' })] }),
      codes.INVALID_FIELD,
      '$.description',
      'expected a string; got 1 (and 1 other problem: $.args[0].mode: expected one of positional, dashdashspace, dashdashequal, stdin, env; got "x")',
    )
  })
})

describe('DESCRIBE_ERR_INVALID_FIELD: v2 fields', () => {
  const command = (over: Record<string, unknown> = {}) => ({
    name: 'go',
    description: 'd',
    args: [],
    ...over,
  })
  it.each<[string, unknown, string, string]>([
    ['check as a string', v2({ check: 'yes' }), '$.check', 'expected a boolean; got "yes"'],
    ['help as a number', v2({ help: 1 }), '$.help', 'expected a boolean; got 1'],
    ['commands as an object', v2({ commands: {} }), '$.commands', 'expected an array; got an object'],
    [
      'a dotted command name',
      v2({ commands: [command({ name: 'a.b' })] }),
      '$.commands[0].name',
      `expected 1 to 64 ${letters} (the command becomes the tool slug.name); got "a.b"`,
    ],
    [
      'an empty command name',
      v2({ commands: [command({ name: '' })] }),
      '$.commands[0].name',
      `expected 1 to 64 ${letters} (the command becomes the tool slug.name); got ""`,
    ],
    [
      'a command without args',
      v2({ commands: [command({ args: undefined })] }),
      '$.commands[0].args',
      'missing (expected an array)',
    ],
    [
      'a command without description',
      v2({ commands: [command({ description: undefined })] }),
      '$.commands[0].description',
      'missing (expected a string)',
    ],
    [
      'a bad command argument',
      v2({ commands: [command(), command({ name: 'b', args: [arg({ mode: 'pipe' })] })] }),
      '$.commands[1].args[0].mode',
      'expected one of positional, dashdashspace, dashdashequal, stdin, env; got "pipe"',
    ],
    [
      'a duplicate command name',
      v2({ commands: [command(), command({ name: 'x' }), command()] }),
      '$.commands[2].name',
      'duplicate command name "go" (first at $.commands[0]); command names must be unique',
    ],
    [
      'a duplicate argument in a command',
      v2({ commands: [command({ args: [arg(), arg()] })] }),
      '$.commands[0].args[1].name',
      'duplicate argument name "path" (first at $.commands[0].args[0]); argument names must be unique',
    ],
    ['process as a string', withProcess('stream'), '$.process', 'expected an object; got "stream"'],
    ['process null', withProcess(null), '$.process', 'expected an object; got null'],
    [
      'an unknown mode',
      withProcess({ mode: 'daemon' }),
      '$.process.mode',
      'expected one of oneshot, stream, service; got "daemon"',
    ],
    [
      'an unknown output framing',
      withProcess({ output: { framing: 'json' } }),
      '$.process.output.framing',
      'expected one of jsonl, lines, chunks; got "json"',
    ],
    [
      'chunks input framing',
      withProcess({ input: { framing: 'chunks' } }),
      '$.process.input.framing',
      'expected one of jsonl, lines; got "chunks"',
    ],
    [
      'an output event that is a string',
      withProcess({ output: { event: 'object' } }),
      '$.process.output.event',
      'expected a JSON Schema (an object or a boolean); got "object"',
    ],
    [
      'an input event that is an array',
      withProcess({ input: { event: [] } }),
      '$.process.input.event',
      'expected a JSON Schema (an object or a boolean); got an array',
    ],
    [
      'an unknown digest',
      withProcess({ digest: { per: 'minutes' } }),
      '$.process.digest.per',
      'expected one of round, events, seconds; got "minutes"',
    ],
    [
      'events digest without n',
      withProcess({ digest: { per: 'events' } }),
      '$.process.digest.n',
      'missing (expected a number)',
    ],
    [
      'events digest n 0',
      withProcess({ digest: { per: 'events', n: 0 } }),
      '$.process.digest.n',
      'expected a number of at least 1; got 0',
    ],
    [
      'events digest n 1.5',
      withProcess({ digest: { per: 'events', n: 1.5 } }),
      '$.process.digest.n',
      'expected an integer; got 1.5',
    ],
    [
      'seconds digest n 0',
      withProcess({ digest: { per: 'seconds', n: 0 } }),
      '$.process.digest.n',
      'expected a number greater than 0; got 0',
    ],
    [
      'seconds digest n "5"',
      withProcess({ digest: { per: 'seconds', n: '5' } }),
      '$.process.digest.n',
      'expected a number; got "5"',
    ],
    [
      'an unknown ready kind',
      withProcess({ ready: { kind: 'banner' } }),
      '$.process.ready.kind',
      'expected one of line, exit, immediate; got "banner"',
    ],
    [
      'a line ready without match',
      withProcess({ ready: { kind: 'line' } }),
      '$.process.ready.match',
      'missing (expected a string)',
    ],
    ['runtime as an array', withRuntime([]), '$.runtime', 'expected an object; got an array'],
    [
      'run_as without user',
      withRuntime({ run_as: { group: 'g' } }),
      '$.runtime.run_as.user',
      'missing (expected a string)',
    ],
    [
      'run_as with an empty user',
      withRuntime({ run_as: { user: '' } }),
      '$.runtime.run_as.user',
      'expected a non-empty string; got ""',
    ],
    [
      'run_as with a numeric group',
      withRuntime({ run_as: { user: 'u', group: 5 } }),
      '$.runtime.run_as.group',
      'expected a string; got 5',
    ],
    [
      'fs.read as a string',
      withRuntime({ sandbox: { fs: { read: '/var' } } }),
      '$.runtime.sandbox.fs.read',
      'expected an array; got "/var"',
    ],
    [
      'an empty fs.write path',
      withRuntime({ sandbox: { fs: { write: ['ok', ''] } } }),
      '$.runtime.sandbox.fs.write[1]',
      'expected a non-empty path without NUL; got ""',
    ],
    [
      'an unknown net',
      withRuntime({ sandbox: { net: 'off' } }),
      '$.runtime.sandbox.net',
      'expected one of host, none, or an allow list {"allow": [...], "deny": [...], "publish": [...]}; got "off"',
    ],
    [
      'a net allow list entry with a space',
      withRuntime({ sandbox: { net: { allow: ['registry.npmjs.org', 'a b'] } } }),
      '$.runtime.sandbox.net.allow[1]',
      'expected a name, "*.name" or an address, with an optional ":port" (no spaces, at most 261 characters); got "a b"',
    ],
    [
      'a published port out of range',
      withRuntime({ sandbox: { net: { publish: [3000, 70000] } } }),
      '$.runtime.sandbox.net.publish[1]',
      'Too big: expected number to be <=65535',
    ],
    [
      'an unknown key in a net allow list',
      withRuntime({ sandbox: { net: { allow: [], ports: [1] } } }),
      '$.runtime.sandbox.net',
      'Unrecognized key: "ports"',
    ],
    [
      'an unknown tmp',
      withRuntime({ sandbox: { tmp: 'ram' } }),
      '$.runtime.sandbox.tmp',
      'expected one of shared, private; got "ram"',
    ],
    [
      'envdir with a slash',
      withRuntime({ envdir: 'a/b' }),
      '$.runtime.envdir',
      `expected one directory name under the operator's --envdir-root (no "/", not "." or ".."); got "a/b"`,
    ],
    [
      'envdir ..',
      withRuntime({ envdir: '..' }),
      '$.runtime.envdir',
      `expected one directory name under the operator's --envdir-root (no "/", not "." or ".."); got ".."`,
    ],
    [
      'envdir .',
      withRuntime({ envdir: '.' }),
      '$.runtime.envdir',
      `expected one directory name under the operator's --envdir-root (no "/", not "." or ".."); got "."`,
    ],
    [
      'an empty envdir',
      withRuntime({ envdir: '' }),
      '$.runtime.envdir',
      `expected one directory name under the operator's --envdir-root (no "/", not "." or ".."); got ""`,
    ],
    [
      'environment as an array',
      withRuntime({ environment: [] }),
      '$.runtime.environment',
      'expected an object of strings; got an array',
    ],
    [
      'an environment name with =',
      withRuntime({ environment: { 'A=B': 'x' } }),
      '$.runtime.environment["A=B"]',
      'expected a variable name without "=" or NUL; got "A=B"',
    ],
    [
      'an empty environment name',
      withRuntime({ environment: { '': 'x' } }),
      '$.runtime.environment[""]',
      'expected a variable name without "=" or NUL; got ""',
    ],
    [
      'a numeric environment value',
      withRuntime({ environment: { N: 1 } }),
      '$.runtime.environment.N',
      'expected a string; got 1',
    ],
    [
      'a null environment value',
      withRuntime({ environment: { N: null } }),
      '$.runtime.environment.N',
      'expected a string; got null',
    ],
    [
      'an absolute rundir',
      withRuntime({ rundir: '/srv/state' }),
      '$.runtime.rundir',
      `expected a path relative to the tool's directory; got "/srv/state"`,
    ],
    [
      'a rundir above the tool',
      withRuntime({ rundir: '../state' }),
      '$.runtime.rundir',
      `expected a path inside the tool's directory; got "../state", which leaves it through ".."`,
    ],
    [
      'a rundir that climbs out',
      withRuntime({ rundir: 'a/../../b' }),
      '$.runtime.rundir',
      `expected a path inside the tool's directory; got "a/../../b", which leaves it through ".."`,
    ],
    [
      'rundir ..',
      withRuntime({ rundir: '..' }),
      '$.runtime.rundir',
      `expected a path inside the tool's directory; got "..", which leaves it through ".."`,
    ],
    [
      'timeout.start 0',
      withRuntime({ timeout: { start: 0 } }),
      '$.runtime.timeout.start',
      'expected a number greater than 0; got 0',
    ],
    [
      'timeout.stop -1',
      withRuntime({ timeout: { stop: -1 } }),
      '$.runtime.timeout.stop',
      'expected a number of at least 0; got -1',
    ],
    [
      'timeout.idle 0',
      withRuntime({ timeout: { idle: 0 } }),
      '$.runtime.timeout.idle',
      'expected a number greater than 0; got 0',
    ],
    [
      'timeout.start "10"',
      withRuntime({ timeout: { start: '10' } }),
      '$.runtime.timeout.start',
      'expected a number; got "10"',
    ],
    [
      'an unknown on_exit',
      withRuntime({ on_exit: 'ignore' }),
      '$.runtime.on_exit',
      'expected one of report, restart, fail; got "ignore"',
    ],
    [
      'cancel SIGKILL',
      withRuntime({ cancel: 'SIGKILL' }),
      '$.runtime.cancel',
      'expected "SIGTERM", "SIGINT" or {"send": EVENT}; got "SIGKILL"',
    ],
    [
      'cancel {}',
      withRuntime({ cancel: {} }),
      '$.runtime.cancel',
      'expected "SIGTERM", "SIGINT" or {"send": EVENT}; got an object',
    ],
    [
      'cancel.send without process.input',
      withRuntime({ cancel: { send: { op: 'quit' } } }, { mode: 'service' }),
      '$.runtime.cancel.send',
      'needs $.process.input: without it stdin is closed once the arguments are written, so the event cannot be sent',
    ],
    [
      'cancel.send that is not a line',
      withRuntime({ cancel: { send: { op: 'quit' } } }, { input: { framing: 'lines' } }),
      '$.runtime.cancel.send',
      'expected one line of text (input framing is "lines"); got an object',
    ],
    [
      'cancel.send with a newline',
      withRuntime({ cancel: { send: 'quit\nnow' } }, { input: { framing: 'lines' } }),
      '$.runtime.cancel.send',
      'expected one line of text (input framing is "lines"); got "quit\\nnow"',
    ],
    [
      'cancel.send that input.event refuses',
      withRuntime(
        { cancel: { send: { op: 'stop' } } },
        { input: { event: { type: 'object', properties: { op: { enum: ['quit'] } } } } },
      ),
      '$.runtime.cancel.send',
      'does not match $.process.input.event: $.op: must be equal to one of the allowed values: "quit"',
    ],
  ])('refuses %s', (_, document, field, reason) => {
    expectFailure(document, codes.INVALID_FIELD, field, reason)
  })

  it('refuses an infinite number (1e999 parses to Infinity)', () => {
    const text = JSON.stringify(withRuntime({ timeout: { start: 12345 } })).replace('12345', '1e999')
    expectFailure(
      text,
      codes.INVALID_FIELD,
      '$.runtime.timeout.start',
      'expected a finite number; got Infinity',
    )
  })
})

describe('DESCRIBE_ERR_BAD_EVENT_SCHEMA', () => {
  it.each<[string, unknown, string, string]>([
    [
      'an output event with an unknown type',
      withProcess({ output: { event: { type: 'strin' } } }),
      '$.process.output.event',
      '$.process.output.event.type: expected one of "array", "boolean", "integer", "null", "number", "object", "string", or an array; got "strin"',
    ],
    [
      'an input event with an unresolvable $ref',
      withProcess({ input: { event: { $ref: 'https://example.com/event.json' } } }),
      '$.process.input.event',
      '$.process.input.event.$ref: cannot resolve the reference "https://example.com/event.json": nothing in this schema has that path or $id, and no other schema is fetched',
    ],
    [
      'a draft 2020-12 schema',
      withProcess({ output: { event: { $schema: 'https://json-schema.org/draft/2020-12/schema' } } }),
      '$.process.output.event',
      '$.process.output.event.$schema: expected "http://json-schema.org/draft-07/schema#" or no $schema (draft-07 is assumed); got "https://json-schema.org/draft/2020-12/schema"',
    ],
    [
      'a bad pattern',
      withProcess({ input: { event: { type: 'string', pattern: '(' } } }),
      '$.process.input.event',
      '$.process.input.event.pattern: expected a regular expression (JavaScript, u flag); got "(" (Invalid regular expression: /(/u: Unterminated group)',
    ],
    [
      'an asynchronous schema',
      withProcess({ output: { event: { $async: true, type: 'object' } } }),
      '$.process.output.event',
      '$.process.output.event.$async: asynchronous schemas are not supported: an event is validated as it arrives',
    ],
  ])('refuses %s', (_, document, field, message) => {
    expectFailure(
      document,
      codes.BAD_EVENT_SCHEMA,
      field,
      `does not compile as a JSON Schema (draft-07): ${message}`,
    )
  })
})

describe('DESCRIBE_ERR_BAD_READY_REGEX', () => {
  it.each([
    ['(', 'Invalid regular expression: /(/: Unterminated group'],
    ['a{2,1}', 'Invalid regular expression: /a{2,1}/: numbers out of order in {} quantifier'],
    ['\\', 'Invalid regular expression: /\\/: \\ at end of pattern'],
  ])('refuses %j', (match, message) => {
    expectFailure(
      withProcess({ ready: { kind: 'line', match } }),
      codes.BAD_READY_REGEX,
      '$.process.ready.match',
      `expected a JavaScript regular expression; got ${JSON.stringify(match)} (${message})`,
    )
  })
})

describe('DESCRIBE_ERR_NAME_COLLISION', () => {
  it('refuses two env arguments that become the same variable', () => {
    expectFailure(
      v1({
        args: [
          arg({ name: 'api-token', mode: 'env' }),
          arg({ name: 'path' }),
          arg({ name: 'API_TOKEN', mode: 'env' }),
        ],
      }),
      codes.NAME_COLLISION,
      '$.args[2].name',
      'arguments "api-token" ($.args[0]) and "API_TOKEN" both become the environment variable API_TOKEN; rename one of them',
    )
  })

  it('allows the same spelling when only one of them is an env argument', () => {
    expect(
      load(v1({ args: [arg({ name: 'api-token', mode: 'env' }), arg({ name: 'API_TOKEN' })] })).args,
    ).toHaveLength(2)
  })

  it('refuses a command named send on a service (the companion tool takes slug.send)', () => {
    expectFailure(
      withProcess({ mode: 'service' }, { commands: [{ name: 'send', description: 'd', args: [] }] }),
      codes.NAME_COLLISION,
      '$.commands[0].name',
      '"send" is taken by the companion tool reader.send that every service gets; rename the command',
    )
  })
})

describe('event schemas across loads', () => {
  it('loads the same tool with a $id twice (a reload) and two tools sharing a $id', () => {
    const event = { $id: 'https://tools.example/event.json', type: 'object', required: ['line'] }
    const first = load(withProcess({ output: { event }, input: { event: { ...event, title: 'input' } } }))
    const second = load(withProcess({ output: { event: { ...event, title: 'v2' } }, input: { event } }))
    expect(first.process.output.validate?.({})).toBe("$: must have required property 'line'")
    expect(second.process.input?.validate?.({ line: 'x' })).toBeUndefined()
  })

  it('refuses a $id that names the draft-07 meta-schema, and keeps working afterwards', () => {
    const event = { $id: 'http://json-schema.org/draft-07/schema#', type: 'object' }
    expectFailure(
      withProcess({ output: { event } }),
      codes.BAD_EVENT_SCHEMA,
      '$.process.output.event',
      'does not compile as a JSON Schema (draft-07): $.process.output.event.$id: "http://json-schema.org/draft-07/schema#" is the id of the JSON Schema meta-schema; give the schema an id of its own',
    )
    const spec = load(
      withProcess({
        output: { event: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer' } },
      }),
    )
    expect(spec.process.output.validate?.(1.5)).toBe('$: must be integer')
  })
})

describe('deeply nested documents', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`
  const document = (extra: string) => `{"protocol":2,"slug":"s","description":"d","args":[],${extra}}`

  it('ignores a deep unknown key and reports deep values in known fields', () => {
    expect(parseDescribe(document(`"x":${nested(100_000)}`), TOOL).slug).toBe('s')
    expectFailure(
      document(`"runtime":{"environment":{"A":${nested(100_000)}}}`),
      codes.INVALID_FIELD,
      '$.runtime.environment.A',
      'expected a string; got an array',
    )
  })

  it('turns a stack overflow while compiling a schema into DESCRIBE_ERR_BAD_EVENT_SCHEMA, and compiles on afterwards', () => {
    const deep = `${'{"properties":{"a":'.repeat(20_000)}{}${'}}'.repeat(20_000)}`
    expectFailure(
      document(`"process":{"output":{"event":${deep}}}`),
      codes.BAD_EVENT_SCHEMA,
      '$.process.output.event',
      'does not compile as a JSON Schema (draft-07): it is nested too deeply (Maximum call stack size exceeded)',
    )
    const spec = load(withProcess({ output: { event: { type: 'object', required: ['after'] } } }))
    expect(spec.process.output.validate?.({})).toBe("$: must have required property 'after'")
  })

  it('refuses a cancel event too deep to validate', () => {
    expectFailure(
      document(
        `"process":{"input":{"event":{"type":"array","items":{"$ref":"#"}}}},"runtime":{"cancel":{"send":${nested(200_000)}}}`,
      ),
      codes.INVALID_FIELD,
      '$.runtime.cancel.send',
      'does not match $.process.input.event: $: could not be validated (Maximum call stack size exceeded)',
    )
  })
})
