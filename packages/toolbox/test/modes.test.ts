import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { exitMeta, type ModeHandler, text } from '../src/index.js'
import { boxWith, compose, ctx, fixtures, textOf, v2Tool } from './helpers.js'

/** A handler as the services package will register one: it starts the process and answers at once. */
function testServiceHandler(runtime: Awaited<ReturnType<typeof compose>>['runtime']): ModeHandler {
  return {
    async call(call) {
      const process = runtime.start({ ...call.start, signal: call.ctx.signal })
      const exit = await process.exit
      return text(`served by the test mode: ${process.stdout().head.toString('utf8').trim()}`, false, {
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
        `${box}/svc: $.process.mode: service mode comes with a later release of toolvisor; this one runs oneshot and stream tools`,
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
