import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type ModeHandler, text } from '../src/index.js'
import { exitMeta } from '../src/results.js'
import { boxWith, compose, ctx, fixtures, textOf, v2Tool } from './helpers.js'

/** A handler as the services package will register one: it starts the process and answers at once. */
function testServiceHandler(runtime: Awaited<ReturnType<typeof compose>>['runtime']): ModeHandler {
  return {
    async call(call) {
      const process = runtime.start({ ...call.start, signal: call.ctx.signal })
      const exit = await process.exit
      return text(`served by the test mode: ${process.output.stdout().head.toString('utf8').trim()}`, false, {
        ...exitMeta(process, exit),
      })
    },
  }
}

describe('the modes seam', () => {
  it('serves a tool of a mode registered through the seam, even after the toolbox loaded', async () => {
    const box = boxWith({
      svc: v2Tool('svc', { process: { mode: 'service' } }, 'echo "up as $AGENT_SESSION_ID"'),
    })
    const { tools, modes, runtime } = await compose([box])
    expect(tools.get('svc')).toBeUndefined()
    expect(tools.loadErrors().map((r) => [r.code, r.field, r.message])).toEqual([
      [
        'TOOLBOX_ERR_UNSUPPORTED_MODE',
        '$.process.mode',
        `${box}/svc: $.process.mode: service tools need the service mode handler of @toolvisor/tool-processes (processesPlugin), which this toolvisor does not compose; it runs oneshot and stream tools`,
      ],
    ])
    expect(modes.list()).toEqual(['oneshot', 'stream'])

    const unregister = modes.register('service', testServiceHandler(runtime))
    expect(tools.loadErrors()).toEqual([])
    const result = await tools.call('svc', {}, ctx())
    expect(textOf(result)).toBe('served by the test mode: up as session-1')
    unregister()
    expect(textOf(await tools.call('svc', {}, ctx()))).toBe(
      'svc: no handler runs service tools any more; the tool was not run',
    )
  })

  it('refuses a second handler for one mode', async () => {
    const { modes, runtime } = await compose([join(fixtures, 'tools')])
    expect(() => modes.register('oneshot', testServiceHandler(runtime))).toThrow(
      expect.objectContaining({
        code: 'TOOLBOX_ERR_MODE_TAKEN',
        message: 'process mode "oneshot" already has a handler; unregister it before registering another',
      }),
    )
  })
})

describe('companions of a mode', () => {
  /** The test handler, bringing `slug.send` along for every tool of its mode. */
  function withCompanion(runtime: Awaited<ReturnType<typeof compose>>['runtime']): ModeHandler {
    return {
      ...testServiceHandler(runtime),
      companions: (loaded) => [
        {
          name: `${loaded.spec.slug}.send`,
          description: 'talks to it',
          inputSchema: { type: 'object' },
          call: async () => text(`sent to ${loaded.spec.slug}`),
        },
      ],
    }
  }

  it('serves them with their tool, named-checked with it, all or none', async () => {
    const box = boxWith({
      svc: v2Tool('svc', { process: { mode: 'service' } }, 'echo up'),
      clash: v2Tool('svc__send', {}, 'echo clash'),
    })
    const { tools, modes, runtime } = await compose([box])
    expect(tools.get('svc__send')?.name).toBe('svc__send')
    modes.register('service', withCompanion(runtime))
    expect(tools.get('svc')).toBeUndefined()
    expect(tools.loadErrors().map((r) => [r.code, r.field, r.message])).toEqual([
      [
        'TOOLBOX_ERR_NAME_TAKEN',
        '$.process.input',
        `${box}/svc: $.process.input: "svc.send" and "svc__send" of ${box}/clash are both "svc__send" for providers; rename one of them`,
      ],
    ])
  })

  it('serves the companion under its provider-safe name once the mode registers', async () => {
    const box = boxWith({ svc: v2Tool('svc', { process: { mode: 'service' } }, 'echo up') })
    const { tools, modes, runtime } = await compose([box])
    modes.register('service', withCompanion(runtime))
    expect(tools.list().map((t) => tools.safeName(t.name))).toEqual(['svc', 'svc__send'])
    expect(textOf(await tools.call('svc__send', {}, ctx()))).toBe('sent to svc')
  })
})
