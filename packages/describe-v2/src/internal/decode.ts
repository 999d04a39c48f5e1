import { DescribeErrorCodes } from '../errors.js'
import type { Load } from './load.js'
import { fail } from './load.js'
import { quote, show } from './text.js'

const expected = 'describe must print one JSON object on stdout'

/** stdout as text: UTF-8 only (a leading BOM is dropped), else DESCRIBE_ERR_NOT_JSON. */
function decode(stdout: string | Uint8Array, load: Load): string {
  if (typeof stdout === 'string') return stdout.startsWith('\uFEFF') ? stdout.slice(1) : stdout
  if (!(stdout instanceof Uint8Array)) {
    fail(load, DescribeErrorCodes.NOT_JSON, undefined, `${expected}; got ${show(stdout)} instead of text`)
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(stdout)
  } catch (error) {
    const lossy = new TextDecoder('utf-8').decode(stdout.subarray(0, 400))
    const reason = `${expected}, encoded as UTF-8; got bytes that are not UTF-8: ${quote(lossy, 80)}`
    return fail(load, DescribeErrorCodes.NOT_JSON, undefined, reason, error)
  }
}

/**
 * The one JSON document `describe` printed, or DESCRIBE_ERR_NOT_JSON with an excerpt of what came
 * and `JSON.parse`'s own words (they give the position of trailing garbage).
 */
export function readDocument(stdout: string | Uint8Array, load: Load): unknown {
  const text = decode(stdout, load)
  if (text.length === 0) fail(load, DescribeErrorCodes.NOT_JSON, undefined, `${expected}; got nothing`)
  try {
    return JSON.parse(text)
  } catch (error) {
    const why = error instanceof Error ? ` (${error.message})` : ''
    return fail(
      load,
      DescribeErrorCodes.NOT_JSON,
      undefined,
      `${expected}; got ${quote(text, 80)}${why}`,
      error,
    )
  }
}
