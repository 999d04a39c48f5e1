export { statusOf } from './answers.js'
export { ProcessesConfig, processesPlugin } from './plugin.js'
export type { ProcessesOptions } from './processes-tool.js'
export { processesTool } from './processes-tool.js'
