import { describe, expect, it } from 'vitest'
import { createLaunchers, RuntimeError, RuntimeErrorCodes, type SandboxMechanism } from '../src/index.js'
import { fixture, makeRuntime, output, tool } from './helpers.js'

describe('runtime errors', () => {
  it('refuses two mechanisms of one name', () => {
    const launchers = createLaunchers()
    const mechanism = { name: 'x', handlesRunAs: false } as unknown as SandboxMechanism
    const remove = launchers.registerSandbox(mechanism)
    expect(() => launchers.registerSandbox(mechanism)).toThrow(
      expect.objectContaining({
        code: 'RUNTIME_ERR_DUPLICATE_MECHANISM',
        message: 'a sandbox mechanism named "x" is already registered',
      }),
    )
    remove()
    expect(launchers.sandbox('x')).toBeUndefined()
  })

  it('starts nothing once disposed', async () => {
    const runtime = makeRuntime()
    await runtime.dispose()
    expect(() => runtime.start({ tool: tool('/bin/true'), argv: [] })).toThrow(
      expect.objectContaining({ code: 'RUNTIME_ERR_DISPOSED' }),
    )
  })

  it('refuses input that does not match input.event, and input to a closed stdin', async () => {
    const runtime = makeRuntime()
    const validate = (value: unknown) =>
      typeof (value as { op?: unknown }).op === 'string' ? undefined : '$.op: required'
    const proc = runtime.start({
      tool: tool(fixture('listener.mjs'), {
        process: { mode: 'service', output: output('jsonl'), input: { framing: 'jsonl', validate } },
      }),
      argv: ['run'],
      stdin: 'open',
    })
    await expect(proc.write({ nope: 1 })).rejects.toMatchObject({
      code: 'RUNTIME_ERR_INVALID_INPUT',
      message: "event does not match listener.mjs's input.event: $.op: required",
    })
    proc.closeStdin()
    await expect(proc.write({ op: 'x' })).rejects.toMatchObject({ code: 'RUNTIME_ERR_STDIN_CLOSED' })
    await proc.stop()
  })

  it('recognises its errors across copies', () => {
    const error = new RuntimeError('RUNTIME_ERR_DISPOSED', 'the runtime was disposed')
    expect(RuntimeError.is(error)).toBe(true)
    expect(Object.values(RuntimeErrorCodes)).toContain(error.code)
  })
})
