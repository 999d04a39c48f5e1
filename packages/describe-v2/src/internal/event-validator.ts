import type { ErrorObject, ValidateFunction } from 'ajv'
import type { EventValidator } from '../types.js'
import { cut, jsonPath, jsonText, pointerSegments, show } from './text.js'

function details(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return `: ${show(params.additionalProperty)}`
    case 'enum':
      return Array.isArray(params.allowedValues)
        ? `: ${cut(params.allowedValues.map(jsonText).join(', '))}`
        : ''
    case 'const':
      return `: ${show(params.allowedValue)}`
    default:
      return ''
  }
}

/** ajv's first error as `$.level: must be string`. */
function reasonOf(errors: readonly ErrorObject[] | null | undefined): string {
  const [first] = errors ?? []
  if (first === undefined) return 'does not match the schema'
  return `${jsonPath(pointerSegments(first.instancePath))}: ${first.message ?? 'is invalid'}${details(first)}`
}

/** A compiled ajv function as an {@link EventValidator}: `undefined` for a match, else the reason. */
export function validatorOf(validate: ValidateFunction): EventValidator {
  return (value) => {
    try {
      return validate(value) ? undefined : reasonOf(validate.errors)
    } catch (error) {
      // A recursive schema over a very deep value can exhaust the stack: that value does not pass.
      return `$: could not be validated (${error instanceof Error ? error.message : String(error)})`
    }
  }
}
