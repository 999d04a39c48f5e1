/**
 * The watchdog of one runtime instance, run as `node watchdog.js RUN_DIR`. It reads its stdin,
 * a pipe from the runtime, until it closes: that happens when the runtime ends, however it ends.
 * Then it kills whatever the run's log still lists as running, and exits.
 */
import { basename } from 'node:path'
import { reapRun } from './recovery.js'

const runDir = process.argv[2]
if (runDir === undefined) {
  process.stderr.write('usage: watchdog.js RUN_DIR\n')
  process.exit(2)
}
// Ctrl-C in the runtime's terminal must not kill the watchdog before it has done its job.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {})
let done = false
const reap = () => {
  if (done) return
  done = true
  reapRun(runDir, basename(runDir))
  process.exit(0)
}
process.stdin.on('end', reap)
process.stdin.on('close', reap)
process.stdin.on('error', reap)
process.stdin.resume()
