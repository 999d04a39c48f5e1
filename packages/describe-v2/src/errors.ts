import { type CodeOf, ToolvisorError } from '@toolvisor/kernel'
import { show } from './internal/text.js'

/** Codes of the errors this package throws. */
export const DescribeErrorCodes = {
  /** `describe` printed something that is not one JSON document. */
  NOT_JSON: 'DESCRIBE_ERR_NOT_JSON',
  /** A field has the wrong type or value; `field` is its JSON path. */
  INVALID_FIELD: 'DESCRIBE_ERR_INVALID_FIELD',
  /** `protocol` is neither absent, 1 nor 2. */
  UNSUPPORTED_PROTOCOL: 'DESCRIBE_ERR_UNSUPPORTED_PROTOCOL',
  /** A declared JSON Schema (`output.event`, `input.event`) does not compile. */
  BAD_EVENT_SCHEMA: 'DESCRIBE_ERR_BAD_EVENT_SCHEMA',
  /** `ready.match` is not a valid regular expression. */
  BAD_READY_REGEX: 'DESCRIBE_ERR_BAD_READY_REGEX',
  /** A name is not provider-safe, or two names collide after mapping. */
  NAME_COLLISION: 'DESCRIBE_ERR_NAME_COLLISION',
  /** Argument values from the model cannot be passed (wrong type, unknown key, leading `-`, missing required). */
  BAD_ARGUMENT: 'DESCRIBE_ERR_BAD_ARGUMENT',
} as const

/** A code of this package. */
export type DescribeErrorCode = CodeOf<typeof DescribeErrorCodes>

/**
 * The shape of every error code in toolvisor: `<FAMILY>_ERR_<WHAT>`, each listed in its package's
 * codes table (`DescribeErrorCodes`, `RuntimeErrorCodes`, ...).
 */
export type ErrorCode = `${Uppercase<string>}_ERR_${Uppercase<string>}`

/** Where and why a tool failed to load. */
export interface LoadingErrorDetails {
  /** The tool's path (or the toolbox entry that failed). */
  readonly tool: string
  /** The JSON path of the bad field (`$.args[1].mode`), when one field is at fault. */
  readonly field?: string
  /** What was wrong and what to do, without the tool and field (they are prefixed). */
  readonly reason: string
}

/**
 * A tool that could not be loaded. Other packages throw it too, with their own codes (a runtime
 * field the operator cannot honour, a sandbox mechanism that refuses): the message always reads
 * `<tool>: <field>: <reason>`.
 */
export class LoadingError<Code extends ErrorCode = ErrorCode> extends ToolvisorError<Code> {
  static override readonly family = 'loading'
  /** The tool's path. */
  readonly tool: string
  /** The JSON path of the bad field, when there is one. */
  readonly field: string | undefined
  /** The reason alone. */
  readonly reason: string

  constructor(code: Code, details: LoadingErrorDetails, options?: ErrorOptions) {
    super(code, `${details.tool}: ${details.field ? `${details.field}: ` : ''}${details.reason}`, options)
    this.tool = details.tool
    this.field = details.field
    this.reason = details.reason
  }
}

/** How a message names an argument: `argument "path"` (a long name the model sent is cut). */
export function argumentLabel(argument: string): string {
  return `argument ${show(argument)}`
}

/**
 * Argument values the model sent that cannot be passed to the tool (a wrong type, an unknown key,
 * a value that would be read as an option, ...); the tool is not run.
 */
export class ArgumentError extends ToolvisorError<typeof DescribeErrorCodes.BAD_ARGUMENT> {
  static override readonly family = 'argument'
  /** The argument's name, when one argument is at fault (`undefined` when several are). */
  readonly argument: string | undefined

  /**
   * @param argument - the argument at fault; the message then reads `argument "x": <reason>`
   * @param reason - why, and what to send instead
   */
  constructor(argument: string | undefined, reason: string) {
    super(
      DescribeErrorCodes.BAD_ARGUMENT,
      argument !== undefined ? `${argumentLabel(argument)}: ${reason}` : reason,
    )
    this.argument = argument
  }
}
