/**
 * The watchdog of one runtime instance, run as `node watchdog.js RUN_DIR` with the run directory
 * held at its fd 3. It reads its stdin, a pipe from the runtime, until it closes: that happens when
 * the runtime ends, however it ends. Then it kills whatever the run's log still lists as running,
 * and exits. The log is read through the directory it was handed, not by the path: a link put at
 * the run's path meanwhile (decision 0092) cannot hide the run's processes from it.
 */
import { basename, dirname } from 'node:path'
import { HeldDirectory } from '../held-dir.js'
import { sparedOf } from '../kept.js'
import { reapRun } from './recovery.js'

/** Where the runtime hands the run directory. */
const RUN_DIR_FD = 3

const runDir = process.argv[2]
if (runDir === undefined) {
  process.stderr.write('usage: watchdog.js RUN_DIR\n')
  process.exit(2)
}
const run = HeldDirectory.handed(runDir, RUN_DIR_FD)
// Ctrl-C in the runtime's terminal must not kill the watchdog before it has done its job.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => {})
let done = false
const reap = () => {
  if (done) return
  done = true
  // The run's directory is <stateDir>/runs/<runId>: its kept processes are spared (decision 0113).
  reapRun(run, basename(runDir), sparedOf(dirname(dirname(runDir)), basename(runDir)))
  process.exit(0)
}
process.stdin.on('end', reap)
process.stdin.on('close', reap)
process.stdin.on('error', reap)
process.stdin.resume()
