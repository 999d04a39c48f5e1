import type { z } from 'zod'
import { jsonPath, otherProblems, show, typeArticle } from './text.js'

/** What the zod issues of the describe schemas look like once parsed (`reportInput` on). */
type Issue = z.core.$ZodIssue

function expectedType(expected: string, input: unknown): string {
  if (expected === 'number' && typeof input === 'number') return 'a finite number'
  return typeArticle(expected)
}

function oneOf(values: readonly unknown[]): string {
  const texts = values.map((value) => (typeof value === 'string' ? value : show(value)))
  return texts.length === 1 ? `"${texts[0]}"` : `one of ${texts.join(', ')}`
}

function expectedGot(expected: string, input: unknown): string {
  return input === undefined ? `missing (expected ${expected})` : `expected ${expected}; got ${show(input)}`
}

/**
 * The reason for one zod issue, in our words: `missing (expected a string)`,
 * `expected one of single, optional; got "many"`. Custom issues carry their own message.
 */
export function issueReason(issue: Issue): string {
  const input: unknown = issue.input
  switch (issue.code) {
    case 'invalid_type':
      return expectedGot(expectedType(issue.expected, input), input)
    case 'invalid_value':
      return expectedGot(oneOf(issue.values), input)
    case 'invalid_union': {
      // Only discriminated unions are used: the path already ends at the discriminator.
      const discriminator = (issue as { discriminator?: unknown }).discriminator
      const options = (issue as { options?: unknown }).options
      if (typeof discriminator === 'string' && Array.isArray(options)) {
        const got = typeof input === 'object' && input !== null ? Reflect.get(input, discriminator) : input
        return expectedGot(oneOf(options), got)
      }
      return issue.message
    }
    case 'too_small':
      if (issue.origin === 'string') return `expected a non-empty string; got ${show(input)}`
      if (issue.origin === 'number' || issue.origin === 'int') {
        const bound = issue.inclusive ? `of at least ${issue.minimum}` : `greater than ${issue.minimum}`
        return `expected a number ${bound}; got ${show(input)}`
      }
      return issue.message
    case 'too_big':
      if (issue.origin === 'number' || issue.origin === 'int') {
        return `expected a number of at most ${issue.maximum}; got ${show(input)}`
      }
      return issue.message
    default:
      return issue.message
  }
}

/**
 * The reason for the first issue, then the others with their JSON paths (`$.args[0].mode: ...`),
 * a bounded list: the author fixes them all in one go.
 */
export function firstIssueReason(issues: readonly Issue[]): string {
  const [first, ...others] = issues
  if (first === undefined) return 'invalid document'
  return (
    issueReason(first) +
    otherProblems(others.map((issue) => `${jsonPath(issue.path)}: ${issueReason(issue)}`))
  )
}
