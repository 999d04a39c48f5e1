import { rmSync } from 'node:fs'
import { isSameProcess, procStat } from '@toolvisor/containment'
import type { KeptRecord } from '@toolvisor/process-runtime'

/**
 * `check --probe --reap` (decision 0113): ends each kept process no serve holds, its keeper first
 * (so nothing answers for it any more), then its process group, then its directory. Each is checked
 * to be what its record says (the keeper by pid and start time, the process as the keeper's child),
 * so a pid the kernel gave another process is never signalled. The next start of a runtime on the
 * state directory kills what its cgroup still holds and reports it lost to its session, once.
 * Returns one line per process for the operator.
 */
export function reapKept(kept: readonly KeptRecord[]): string[] {
  return kept.map((record) => {
    const what = `${record.task ?? record.tool} (${record.tool}, pid ${record.pid})${record.session ? ` of session ${record.session}` : ''}`
    if (!isSameProcess(record.keeper, record.keeperStart))
      return `toolvisor: kept ${what}: its keeper is gone already`
    const child = procStat(record.pid)?.ppid === record.keeper
    signal(record.keeper)
    if (child) {
      signal(-record.pid)
      signal(record.pid)
    }
    rmSync(record.dir, { recursive: true, force: true })
    return `toolvisor: reaped kept ${what}: its keeper${child ? ' and its process group' : ''} killed; the next start reports it lost to its session`
  })
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone meanwhile
  }
}
