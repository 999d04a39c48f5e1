import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the CLI reports. */
export const CliErrorCodes = {
  /** A wrong flag, a missing argument, bad JSON arguments: exit 2, with what to do. */
  USAGE: 'CLI_ERR_USAGE',
  /** The configuration file is missing, not JSON, or refused by its schema (the field is named). */
  CONFIG: 'CLI_ERR_CONFIG',
  /** A toolbox that does not exist, is not a readable directory or holds no tool; a tool name no toolbox has. */
  TOOLBOX: 'CLI_ERR_TOOLBOX',
} as const

/** A code of the CLI. */
export type CliErrorCode = CodeOf<typeof CliErrorCodes>

/** An error the CLI prints as is and exits 2 for. */
export class CliError extends errorFamily<CliErrorCode>('cli') {}
