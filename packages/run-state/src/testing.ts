// What tests of run-state, and of the packages that recover runs through it, need: the state a
// run that died left, written directly.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Writes the state a run that died left in `stateDir` (as a runtime killed by SIGKILL leaves it):
 * `runs/RUN` with an owner that is gone and `records` as its `processes.log`
 * (`{op: '+', id, pid, start, tool, at}`, `{op: '@', id, task, ...}`). Returns the run's directory.
 */
export function deadRun(stateDir: string, run: string, records: readonly object[]): string {
  const dir = join(stateDir, 'runs', run)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(join(dir, 'owner.json'), JSON.stringify({ pid: 2 ** 22 + 1, start: '1', at: '' }))
  writeFileSync(join(dir, 'processes.log'), `${records.map((r) => JSON.stringify(r)).join('\n')}\n`)
  return dir
}
