// The demo until tools arrive: a kernel composed from two plugins, registered in the "wrong"
// order, and how each became active.
import { definePlugin, Kernel, token } from '../packages/kernel/dist/index.js'

const Clock = token('clock')
const Greeter = token('greeter')

const greeter = definePlugin({
  name: 'greeter',
  inject: { clock: Clock },
  provides: [Greeter],
  apply(ctx) {
    ctx.provide(Greeter, {
      greet: (who) => `hello ${who}, it is ${new Date(ctx.deps.clock.now()).toISOString()}`,
    })
    ctx.onDispose(() => console.log('greeter: disposed (first: it depends on clock)'))
  },
})
const clock = definePlugin({
  name: 'clock',
  provides: [Clock],
  apply(ctx) {
    ctx.provide(Clock, { now: () => Date.now() })
    ctx.onDispose(() => console.log('clock: disposed (last)'))
  },
})

const kernel = new Kernel()
const g = kernel.use(greeter)
console.log(`greeter: ${g.state}, missing ${JSON.stringify(g.missing)}`)
const c = kernel.use(clock)
console.log(`clock: ${c.state}`)
await c
await g
console.log(`clock: ${c.state}; greeter: ${g.state} (activated when clock arrived)`)
console.log(kernel.get(Greeter).greet('toolvisor'))
await kernel.dispose()
