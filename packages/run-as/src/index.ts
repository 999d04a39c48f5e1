/**
 * Who a process runs as: the host's accounts (a user looked up, its groups, what it can reach by
 * the file modes alone), the operator's allow list of `run_as` users (decision 0092), and the two
 * `run_as` mechanisms every util-linux host has, `setpriv` and `runuser`, written against the
 * launchers seam (`RunAsMechanism`) as a sandbox mechanism is. `@toolvisor/process-runtime`
 * registers both and checks every tool's `run_as` against the allow list.
 */
export type { AccessNeed, Account } from './accounts.js'
export { groupIdsOf, lookupAccount, missingAccess, selfAccount } from './accounts.js'
export type { RunAsRefusal } from './allow.js'
export { refuseUnlistedRunAs } from './allow.js'
export { runuserRunAs, setprivRunAs } from './mechanisms.js'
