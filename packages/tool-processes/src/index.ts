export { processesPlugin } from './plugin.js'
export { processesTool, statusOf } from './processes-tool.js'
