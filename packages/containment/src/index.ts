export type { TreeEvents, TreeUsage } from './containment.js'
export { Containment, Tree } from './containment.js'
export type { CgroupHost, Controller, Hierarchy, KillMethod } from './host.js'
export { cgroupHost } from './host.js'
export type { CgroupLimits } from './limits.js'
export type { CgroupPlacement, WarmAnswer, WarmPlan } from './placement.js'
export type { ProcStat } from './procfs.js'
export {
  hasVariable,
  isSameProcess,
  markedProcesses,
  pidsWithEnv,
  processesWithVariable,
  procStat,
  startTimeOf,
} from './procfs.js'
export type { CgroupRecord } from './reap.js'
export { reapCgroups, reapOrphanCgroups } from './reap.js'
export type { Remover } from './tree.js'
