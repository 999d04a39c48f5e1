import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { KernelError, KernelErrorCodes, ToolvisorError } from '../src/errors.js'
import { Kernel } from '../src/kernel.js'
import { definePlugin } from '../src/plugin.js'
import type { Token } from '../src/token.js'
import { token } from '../src/token.js'

interface Clock {
  now(): number
}
interface Greeter {
  greet(name: string): string
}
const Clock = token<Clock>('clock')
const Greeter = token<Greeter>('greeter')

const clockPlugin = (now = 42) =>
  definePlugin({
    name: `clock-${now}`,
    provides: [Clock],
    apply(ctx) {
      ctx.provide(Clock, { now: () => now })
    },
  })

const greeterPlugin = (log: string[] = []) =>
  definePlugin({
    name: 'greeter',
    inject: { clock: Clock },
    provides: [Greeter],
    apply(ctx) {
      log.push(`greeter up at ${ctx.deps.clock.now()}`)
      ctx.provide(Greeter, { greet: (name) => `hello ${name} at ${ctx.deps.clock.now()}` })
      ctx.onDispose(() => {
        log.push('greeter down')
      })
    },
  })

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('token', () => {
  it('is a readable key', () => {
    expect(Clock.key).toBe('clock')
    expect(() => token('')).toThrow(TypeError)
  })
})

describe('activation', () => {
  it('keeps a plugin pending until its injected tokens have an active provider, in any order', async () => {
    const kernel = new Kernel()
    const greeter = kernel.use(greeterPlugin())
    expect(greeter.state).toBe('pending')
    expect(greeter.missing).toEqual(['clock'])
    expect(kernel.pending()).toEqual([{ name: 'greeter', missing: ['clock'] }])
    await kernel.use(clockPlugin())
    await greeter
    expect(greeter.state).toBe('active')
    expect(greeter.missing).toEqual([])
    expect(kernel.get(Greeter)?.greet('ada')).toBe('hello ada at 42')
    expect(kernel.pending()).toEqual([])
    await kernel.dispose()
  })

  it('require() gives the service typed, or says why there is none: none used, or its provider pending', async () => {
    const kernel = new Kernel()
    expect(() => kernel.require(Greeter)).toThrow(
      new KernelError(
        'KERNEL_ERR_NOT_PROVIDED',
        'nothing provides greeter: no plugin used here provides it: use() the plugin that does',
      ),
    )
    const greeter = kernel.use(greeterPlugin())
    const thrown = (() => {
      try {
        return kernel.require(Greeter)
      } catch (error) {
        return error
      }
    })()
    expect(thrown).toMatchObject({
      code: 'KERNEL_ERR_NOT_PROVIDED',
      message:
        'nothing provides greeter: its provider greeter is not active yet (it waits for clock): await kernel.ready() first',
    })
    await kernel.use(clockPlugin())
    await greeter
    const typed: Greeter = kernel.require(Greeter)
    expect(typed.greet('ada')).toBe('hello ada at 42')
    await kernel.dispose()
  })

  it('activates at once when the provider came first', async () => {
    const kernel = new Kernel()
    await kernel.use(clockPlugin())
    const greeter = kernel.use(greeterPlugin())
    expect(greeter.state).toBe('loading')
    await greeter
    expect(greeter.state).toBe('active')
    await kernel.dispose()
  })

  it('counts a provider only once its apply has finished', async () => {
    const kernel = new Kernel()
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const slowClock = kernel.use(
      definePlugin({
        name: 'slow-clock',
        provides: [Clock],
        async apply(ctx) {
          ctx.provide(Clock, { now: () => 7 })
          await gate
        },
      }),
    )
    const greeter = kernel.use(greeterPlugin())
    expect(slowClock.state).toBe('loading')
    expect(kernel.get(Clock)).toBeUndefined()
    expect(greeter.state).toBe('pending')
    release()
    await greeter
    expect(kernel.get(Greeter)?.greet('x')).toBe('hello x at 7')
    await kernel.dispose()
  })

  it('gives ctx.get an optional service without pending', async () => {
    const kernel = new Kernel()
    const seen: Array<number | undefined> = []
    const probe = (name: string) =>
      definePlugin({
        name,
        apply(ctx) {
          seen.push(ctx.get(Clock)?.now())
        },
      })
    await kernel.use(probe('before'))
    await kernel.use(clockPlugin(5))
    await kernel.use(probe('after'))
    expect(seen).toEqual([undefined, 5])
    await kernel.dispose()
  })
})

describe('config', () => {
  const configured = definePlugin({
    name: 'configured',
    config: z.object({
      limits: z.object({ events: z.number().int().positive() }),
      label: z.string().default('x'),
    }),
    apply() {},
  })

  it('validates at use() and passes the parsed config to apply', async () => {
    const kernel = new Kernel()
    let got: unknown
    await kernel.use(
      {
        ...configured,
        apply: (_ctx, config) => {
          got = config
        },
      },
      { limits: { events: 3 } },
    )
    expect(got).toEqual({ limits: { events: 3 }, label: 'x' })
    await kernel.dispose()
  })

  it('throws at once with the path of the bad field', () => {
    const kernel = new Kernel()
    let error: unknown
    try {
      kernel.use(configured, { limits: { events: -1 } })
    } catch (caught) {
      error = caught
    }
    expect(KernelError.is(error)).toBe(true)
    expect((error as KernelError).code).toBe(KernelErrorCodes.INVALID_CONFIG)
    expect((error as KernelError).message).toMatch(
      /^plugin "configured" got an invalid config: config\.limits\.events: /,
    )
  })
})

describe('providers', () => {
  it('fails the second provider of one key with a coded error naming both', async () => {
    const kernel = new Kernel()
    await kernel.use(clockPlugin(1))
    const second = kernel.use(clockPlugin(2))
    const error = (await rejection(second)) as KernelError
    expect(second.state).toBe('failed')
    expect(error.code).toBe('KERNEL_ERR_PLUGIN_FAILED')
    const cause = error.cause as KernelError
    expect(cause.code).toBe('KERNEL_ERR_DUPLICATE_PROVIDER')
    expect(cause.message).toBe(
      `plugin "clock-2" cannot provide 'clock': it is already provided by plugin "clock-1"; dispose one of them`,
    )
    expect(kernel.get(Clock)?.now()).toBe(1)
    await kernel.dispose()
  })

  it('refuses a token the plugin did not declare', async () => {
    const kernel = new Kernel()
    const handle = kernel.use(
      definePlugin({
        name: 'sneaky',
        apply(ctx) {
          ctx.provide(Clock, { now: () => 0 })
        },
      }),
    )
    const error = (await rejection(handle)) as KernelError
    expect((error.cause as KernelError).code).toBe('KERNEL_ERR_UNDECLARED_PROVIDE')
    expect((error.cause as KernelError).message).toContain(
      `plugin "sneaky" provided 'clock' without listing it`,
    )
    expect(kernel.get(Clock)).toBeUndefined()
    await kernel.dispose()
  })
})

describe('failure', () => {
  it('leaves the plugin failed, undoes what it registered, and rejects with the cause', async () => {
    const kernel = new Kernel()
    const log: string[] = []
    const boom = new Error('boom')
    let signal: AbortSignal | undefined
    const handle = kernel.use(
      definePlugin({
        name: 'flaky',
        provides: [Clock],
        apply(ctx) {
          signal = ctx.signal
          ctx.provide(Clock, { now: () => 1 })
          ctx.onDispose(() => void log.push('first'))
          ctx.onDispose(() => void log.push('second'))
          throw boom
        },
      }),
    )
    const dependent = kernel.use(greeterPlugin())
    const error = (await rejection(handle)) as KernelError
    expect(handle.state).toBe('failed')
    expect(error.code).toBe('KERNEL_ERR_PLUGIN_FAILED')
    expect(error.cause).toBe(boom)
    expect(error.message).toBe('plugin "flaky" failed: boom')
    expect(log).toEqual(['second', 'first'])
    expect(signal?.aborted).toBe(true)
    expect(kernel.get(Clock)).toBeUndefined()
    expect(dependent.state).toBe('pending')
    await kernel.dispose()
  })

  it('rejects a handle that is disposed before it became active', async () => {
    const kernel = new Kernel()
    const greeter = kernel.use(greeterPlugin())
    await greeter.dispose()
    const error = (await rejection(greeter)) as KernelError
    expect(error.code).toBe('KERNEL_ERR_DISPOSED')
    expect(greeter.state).toBe('disposed')
    await kernel.dispose()
    expect(() => kernel.use(clockPlugin())).toThrow(/the kernel is disposed/)
  })
})

describe('unloading', () => {
  it('unloads dependents first when a provider goes, and re-activates them with a new provider', async () => {
    const kernel = new Kernel()
    const log: string[] = []
    const clock = kernel.use(clockPlugin(1))
    const greeter = kernel.use(greeterPlugin(log))
    await greeter
    await clock.dispose()
    expect(log).toEqual(['greeter up at 1', 'greeter down'])
    expect(greeter.state).toBe('pending')
    expect(greeter.missing).toEqual(['clock'])
    expect(kernel.get(Greeter)).toBeUndefined()
    await kernel.use(clockPlugin(2))
    await vi_waitFor(() => greeter.state === 'active')
    expect(log).toEqual(['greeter up at 1', 'greeter down', 'greeter up at 2'])
    expect(kernel.get(Greeter)?.greet('b')).toBe('hello b at 2')
    await kernel.dispose()
  })

  it('disposes in reverse activation order, dependents first, aborting the signal before disposers', async () => {
    const kernel = new Kernel()
    const log: string[] = []
    const Store = token<object>('store')
    const recorder = (
      name: string,
      inject: Record<string, Token<unknown>>,
      provides: Array<Token<unknown>>,
    ) =>
      definePlugin({
        name,
        inject,
        provides,
        apply(ctx) {
          for (const t of provides) ctx.provide(t, {})
          ctx.onDispose(() => void log.push(`${name}: first registered (signal ${ctx.signal.aborted})`))
          ctx.onDispose(() => void log.push(`${name}: last registered`))
        },
      })
    // Registered in dependency-unfriendly order: top, middle, bottom.
    const top = kernel.use(recorder('top', { s: Store }, []))
    kernel.use(recorder('middle', { c: Clock }, [Store]))
    await kernel.use(recorder('bottom', {}, [Clock]))
    await top
    await kernel[Symbol.asyncDispose]()
    expect(log).toEqual([
      'top: last registered',
      'top: first registered (signal true)',
      'middle: last registered',
      'middle: first registered (signal true)',
      'bottom: last registered',
      'bottom: first registered (signal true)',
    ])
  })

  it('reports every disposer error together', async () => {
    const kernel = new Kernel()
    const ran: string[] = []
    await kernel.use(
      definePlugin({
        name: 'a',
        apply(ctx) {
          ctx.onDispose(() => {
            ran.push('a1')
            throw new Error('a1 broke')
          })
          ctx.onDispose(() => {
            ran.push('a2')
            throw new Error('a2 broke')
          })
        },
      }),
    )
    await kernel.use(
      definePlugin({
        name: 'b',
        apply(ctx) {
          ctx.onDispose(async () => {
            ran.push('b1')
            throw new Error('b1 broke')
          })
        },
      }),
    )
    const error = (await rejection(kernel.dispose())) as KernelError
    expect(ran).toEqual(['b1', 'a2', 'a1'])
    expect(error.code).toBe('KERNEL_ERR_DISPOSE_FAILED')
    expect(error.errors.map((e) => (e as Error).message)).toEqual(['b1 broke', 'a2 broke', 'a1 broke'])
    expect(error.message).toBe('3 disposer(s) failed: b1 broke; a2 broke; a1 broke')
    expect(error.cause).toBeInstanceOf(AggregateError)
  })

  it('refuses provide and onDispose after the plugin unloaded', async () => {
    const kernel = new Kernel()
    let saved: Parameters<ReturnType<typeof clockPlugin>['apply']>[0] | undefined
    const handle = kernel.use(
      definePlugin({
        name: 'keeper',
        provides: [Clock],
        apply(ctx) {
          saved = ctx
        },
      }),
    )
    await handle
    await handle.dispose()
    expect(() => saved?.provide(Clock, { now: () => 1 })).toThrow(
      expect.objectContaining({ code: 'KERNEL_ERR_DISPOSED' }),
    )
    expect(() => saved?.onDispose(() => {})).toThrow(/after it was unloaded/)
    await kernel.dispose()
  })
})

describe('errors', () => {
  it('recognises errors across copies by their marker', () => {
    const error = new KernelError('KERNEL_ERR_DISPOSED', 'x')
    expect(KernelError.is(error)).toBe(true)
    expect(ToolvisorError.is(error)).toBe(true)
    // A structural copy from "another install": same Symbol.for marker, different class.
    const copy = Object.assign(new Error('x'), { code: 'KERNEL_ERR_DISPOSED' })
    Object.defineProperty(copy, Symbol.for('toolvisor.error'), { value: 'kernel' })
    expect(KernelError.is(copy)).toBe(true)
    class OtherError extends ToolvisorError<'OTHER_ERR_X'> {
      static override readonly family = 'other'
    }
    expect(KernelError.is(new OtherError('OTHER_ERR_X', 'y'))).toBe(false)
    expect(KernelError.is(new Error('plain'))).toBe(false)
    expect(KernelError.is(undefined)).toBe(false)
  })

  it('produces every code of the table, each from what it says', async () => {
    const seen = new Set<string>()
    // A code thrown inside apply reaches the handle as the cause of PLUGIN_FAILED.
    const note = (error: unknown): void => {
      if (!KernelError.is(error)) return
      seen.add(error.code)
      note(error.cause)
    }
    const kernel = new Kernel()
    try {
      kernel.use(definePlugin({ name: 'typed', config: z.object({ n: z.number() }), apply() {} }), {
        n: 'x',
      } as never)
    } catch (error) {
      note(error) // INVALID_CONFIG
    }
    await kernel.use(clockPlugin(1))
    note(await rejection(kernel.use(clockPlugin(2)))) // DUPLICATE_PROVIDER
    const sneaky = definePlugin({ name: 'sneaky', apply: (ctx) => ctx.provide(Greeter, { greet: () => '' }) })
    note(await rejection(kernel.use(sneaky))) // UNDECLARED_PROVIDE
    note(
      await rejection(
        kernel.use(
          definePlugin({
            name: 'boom',
            apply: () => {
              throw new Error('no')
            },
          }),
        ),
      ),
    ) // PLUGIN_FAILED
    const missing = token<unknown>('nobody-provides-this')
    const patient = new Kernel()
    const waiting = patient.use(definePlugin({ name: 'waiting', inject: { x: missing }, apply() {} }))
    note(await rejection(patient.ready({ timeoutMs: 10 }))) // PENDING
    try {
      patient.require(missing)
    } catch (error) {
      note(error) // NOT_PROVIDED
    }
    const failing = new Kernel()
    await failing.use(
      definePlugin({
        name: 'bad-dispose',
        apply: (ctx) =>
          ctx.onDispose(() => {
            throw new Error('x')
          }),
      }),
    )
    note(await rejection(failing.dispose())) // DISPOSE_FAILED
    await kernel.dispose().catch(note)
    await patient.dispose()
    note(await rejection(waiting)) // DISPOSED
    expect([...seen].sort()).toEqual(Object.values(KernelErrorCodes).sort())
  })
})

describe('ready', () => {
  it('resolves once every plugin is active, whatever the order they were used in', async () => {
    const kernel = new Kernel()
    kernel.use(greeterPlugin())
    kernel.use(clockPlugin(7))
    await kernel.ready({ timeoutMs: 1000 })
    expect(kernel.get(Greeter)?.greet('ada')).toBe('hello ada at 7')
    await kernel.dispose()
  })

  it('reports a plugin still waiting after the bound, with the tokens it misses, instead of hanging', async () => {
    const kernel = new Kernel()
    kernel.use(greeterPlugin())
    const error = await rejection(kernel.ready({ timeoutMs: 20 }))
    expect(error).toMatchObject({
      code: 'KERNEL_ERR_PENDING',
      message: `after 20 ms not every plugin is active: "greeter" waits for 'clock'; use a plugin that provides what is missing`,
    })
    expect(kernel.pending()).toEqual([{ name: 'greeter', missing: ['clock'] }])
    await kernel.dispose()
  })

  it('rejects with the failure of a plugin that failed', async () => {
    const kernel = new Kernel()
    kernel.use(
      definePlugin({
        name: 'boom',
        apply: () => {
          throw new Error('no')
        },
      }),
    )
    expect(await rejection(kernel.ready())).toMatchObject({ code: 'KERNEL_ERR_PLUGIN_FAILED' })
    await kernel.dispose()
  })
})

describe('inject as a function of the config', () => {
  it('waits for what the config names', async () => {
    const Sun = token<Clock>('clock:sun')
    const Moon = token<Clock>('clock:moon')
    const user = definePlugin({
      name: 'reads-a-clock',
      config: z.object({ which: z.enum(['sun', 'moon']) }),
      inject: (config: { which: 'sun' | 'moon' }) => ({ clock: config.which === 'sun' ? Sun : Moon }),
      provides: [Greeter],
      apply(ctx) {
        ctx.provide(Greeter, { greet: (name) => `${name} at ${(ctx.deps.clock as Clock).now()}` })
      },
    })
    const kernel = new Kernel()
    kernel.use(user, { which: 'moon' })
    kernel.use(
      definePlugin({ name: 'sun', provides: [Sun], apply: (ctx) => ctx.provide(Sun, { now: () => 1 }) }),
    )
    expect(kernel.pending()).toEqual([{ name: 'reads-a-clock', missing: ['clock:moon'] }])
    kernel.use(
      definePlugin({ name: 'moon', provides: [Moon], apply: (ctx) => ctx.provide(Moon, { now: () => 2 }) }),
    )
    await kernel.ready({ timeoutMs: 1000 })
    expect(kernel.get(Greeter)?.greet('ada')).toBe('ada at 2')
    await kernel.dispose()
  })
})

async function vi_waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (condition()) return
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  throw new Error('condition never became true')
}
