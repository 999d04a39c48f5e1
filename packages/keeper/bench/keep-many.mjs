// The "daemon" of keeper.mjs's re-adoption measure: keeps COUNT processes (`FILE ARGS...`) under
// ROOT through Node's spawn, at most CONCURRENCY starts at a time, and prints one JSON line once
// every one is attached: {"keepers": [...], "pids": [...], "ms": N} (the keepers' pids, the kept
// processes' pids, the time it took). When a start fails it prints {"error", "code", "keepers",
// "pids"} instead (what did start, for the bench to end). Then it only waits, to be killed with
// kill -9 (its stdin ending first, the bench gone, it ends what it kept and exits). Argument: one
// JSON object {root, count, concurrency, file, args, env, reapAfterMs}.
import { readdirSync, readFileSync } from 'node:fs'
import { nodeSpawner } from '@toolvisor/process-runtime'
import { Keepers } from '../dist/index.js'

const { root, count, concurrency, file, args, env, reapAfterMs } = JSON.parse(process.argv[2])
const keepers = new Keepers({ root, reapAfterMs })
const keeperPids = []
const pids = []
const children = [] // held, so that nothing of them is collected while the helper waits

async function keepOne() {
  const kept = keepers.wrap({ file, args, env, cwd: '/', extraFds: [] })
  const spawned = await nodeSpawner.launch(kept.launch)
  keeperPids.push(spawned.child.pid)
  const child = await kept.attach(spawned.child.stdout, spawned.child.stderr)
  child.stdout.resume()
  child.stderr.resume()
  pids.push(child.pid)
  children.push(child, spawned)
}

// Out of descriptors or processes, Node's spawn emits `error` on the child a tick after
// `nodeSpawner.launch` threw: kept as the cause instead of ending the helper unheard.
let spawnError
process.on('uncaughtException', (error) => {
  if (!error?.syscall?.startsWith('spawn')) throw error
  spawnError = error
})

// Its stdin is the bench: once the bench is gone (killed, crashed), what was kept is ended, and so
// is the helper. The bench itself ends the helper with kill -9, which leaves them running.
process.stdin.on('end', () => {
  // The kept processes by their parent too: those whose attach was still under way.
  const theirs = readdirSync('/proc').filter((name) => {
    try {
      return keeperPids.includes(
        Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]),
      )
    } catch {
      return false
    }
  })
  for (const pid of [...pids, ...theirs.map(Number), ...keeperPids])
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone
    }
  process.exit(1)
})
process.stdin.on('error', () => {})
process.stdin.resume()
process.stdout.on('error', () => {})

const start = process.hrtime.bigint()
let next = 0
let failure
async function worker() {
  while (next < count && failure === undefined) {
    next++
    try {
      await keepOne()
    } catch (error) {
      await new Promise((resolve) => setImmediate(resolve))
      const cause = spawnError ?? error
      const also = cause !== error && cause.message !== error.message ? ` (the spawn: ${cause.message})` : ''
      failure ??= { message: `${error.message}${also}`, code: error.code ?? cause.code }
    }
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
const ms = Number(process.hrtime.bigint() - start) / 1e6
const said =
  failure === undefined
    ? { keepers: keeperPids, pids, ms }
    : { error: failure.message, code: failure.code, keepers: keeperPids, pids }
process.stdout.write(`${JSON.stringify(said)}\n`)
setInterval(() => {}, 1 << 30)
