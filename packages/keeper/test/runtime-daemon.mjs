// A runtime for the keeper's tests, as `serve` composes one (the fork server, a cgroup per launch
// where the host has them): starts one kept process (`python3 ARGV`), prints
// {"pid","runId","dir"} once it runs, then waits to be killed (kill -9) or, sent "dispose" on
// stdin, disposes with keep.
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { Keepers } from '@toolvisor/keeper'
import { nativeSpawner } from '@toolvisor/launch-native'
import { createLaunchers, Runtime } from '@toolvisor/process-runtime'

const { stateDir, argv, file = '/usr/bin/python3', reapAfterMs } = JSON.parse(process.argv[2])
const keeping = new Keepers({ root: join(stateDir, 'keep'), ...(reapAfterMs ? { reapAfterMs } : {}) })
const runtime = new Runtime({ stateDir, spawner: nativeSpawner(), keeping }, createLaunchers())
const tool = await runtime.preparePlain({ name: 'ticker', file })
const started = runtime.start({ tool, argv, keep: true, stdin: 'open' })
await started.launched
// As the task registry does for a service of session alice.
runtime.annotate(started.id, { task: 'p1', session: 'alice', kind: 'service' })
const [dir] = keeping.list()
process.stdout.write(`${JSON.stringify({ pid: started.pid, runId: runtime.runId, dir })}\n`)
createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line !== 'dispose') return
  await runtime.dispose({ keep: true })
  process.stdout.write('disposed\n')
  process.exit(0)
})
