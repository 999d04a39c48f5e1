export type { KeepersOptions, KeptLaunch } from './keeper.js'
export { builtKeeper, Keepers, keeperStatus } from './keeper.js'
export type { KeptState } from './kept-child.js'
export { KeptChild } from './kept-child.js'
