// A daemon for the keeper's tests: keeps one process (`python3 ARGV`) under ROOT, prints
// {"dir","pid","keeper"} as one line once it runs, and then only waits (to be killed with kill -9).
import { Keepers } from '@toolvisor/keeper'
import { nodeSpawner } from '@toolvisor/process-runtime'

const { root, argv, reapAfterMs } = JSON.parse(process.argv[2])
const keepers = new Keepers({ root, ...(reapAfterMs ? { reapAfterMs } : {}) })
const kept = keepers.wrap({
  file: '/usr/bin/python3',
  args: argv,
  env: { PATH: '/usr/bin:/bin' },
  cwd: '/',
  extraFds: [],
})
const spawned = await nodeSpawner.launch(kept.launch)
const child = await kept.attach(spawned.child.stdout, spawned.child.stderr)
child.stdout.resume()
process.stdout.write(`${JSON.stringify({ dir: kept.dir, pid: child.pid, keeper: child.keeper })}\n`)
setInterval(() => {}, 1 << 30)
