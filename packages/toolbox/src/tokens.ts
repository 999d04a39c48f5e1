import { token } from '@toolvisor/kernel'
import type { Modes } from './modes.js'
import type { Oneshots } from './oneshots.js'
import type { BinaryTools } from './plugin.js'
import type { ToolRegistry } from './types.js'

/** The `tools` token: the model-facing tool registry. */
export const ToolsToken = token<ToolRegistry>('tools')

/** The `binary-tools` token: loads executables as tools (used by capability backends and the CLI). */
export const BinaryToolsToken = token<BinaryTools>('binary-tools')

/** The `modes` token: the handler of each process mode (`service` registers here). */
export const ModesToken = token<Modes>('modes')

/** The `oneshots` token: finished oneshot calls by process id, fenced by session (`processes output`). */
export const OneshotsToken = token<Oneshots>('oneshots')
