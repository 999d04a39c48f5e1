import { token } from '@toolvisor/kernel'
import type { BinaryTools } from './plugin.js'
import type { ToolRegistry } from './types.js'

/** The `tools` token: the model-facing tool registry. */
export const ToolsToken = token<ToolRegistry>('tools')

/** The `binary-tools` token: loads executables as tools (used by capability backends and the CLI). */
export const BinaryToolsToken = token<BinaryTools>('binary-tools')
