export type { SpillLedger } from './disk.js'
export { DiskBudget } from './disk.js'
export type { HeldFile } from './held-dir.js'
export { fileAt, HeldDirectory } from './held-dir.js'
export type { KeptRecord, Spared } from './kept.js'
export {
  handedOver,
  keepRoot,
  keptAlive,
  NOTHING_SPARED,
  recordKept,
  sparedOf,
  updateKept,
} from './kept.js'
export type { LostProcess } from './lost.js'
export { keptLost, markTold } from './lost-records.js'
export type { SpillAllowance, SpillCut } from './spill-cut.js'
export { lineKeptText, spillCutText } from './spill-cut.js'
export { MARKER_VARIABLE, RunState } from './state.js'
export { trustStateDir } from './state-dir.js'
export type { SweepUrgency } from './sweeper.js'
export { Sweeper } from './sweeper.js'
