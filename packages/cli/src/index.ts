export type { CapabilityConfig, Config } from './config.js'
export {
  BashSection,
  CapabilityEntry,
  ConfigFile,
  parseConfig,
  readConfig,
  readConfigFile,
} from './config.js'
export type { CliErrorCode } from './errors.js'
export { CliError, CliErrorCodes } from './errors.js'
export { CONFIG_SCHEMA_FILE, configJsonSchema } from './json-schema.js'
export { main } from './main.js'
export type { Io } from './output.js'
