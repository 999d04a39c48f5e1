/** Which known name a misspelt one was probably meant to be (a describe key, an argument name). */

/** Case and `-` versus `_` are not told apart: `Backing-Type` is `backing_type` misspelt. */
export function fold(text: string): string {
  return text.toLowerCase().replaceAll('-', '_')
}

/** Edits allowed for a name this long: one for short names, two from five characters on. */
function allowance(name: string): number {
  return name.length <= 4 ? 1 : 2
}

/** Optimal string alignment distance (an adjacent swap is one edit), or `limit + 1` beyond it. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let before = Array.from({ length: b.length + 1 }, (_, j) => j)
  let previous = before
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] ?? 0) + 1)
      }
      row.push(best)
    }
    before = previous
    previous = row
  }
  return previous[b.length] ?? limit + 1
}

/**
 * The one name of `known` that `name` is close to (a few edits apart, ignoring case and `-`/`_`),
 * or `undefined` when none or several are: a guess is offered only when it is unambiguous.
 *
 * @example
 * ```ts
 * closeName('proccess', ['process', 'runtime']) // 'process'
 * closeName('backing-type', ['backing_type'])   // 'backing_type'
 * ```
 */
export function closeName(name: string, known: readonly string[]): string | undefined {
  const folded = fold(name)
  const close = known.filter((candidate) => {
    const limit = allowance(candidate)
    return distance(folded, fold(candidate), limit) <= limit
  })
  return close.length === 1 ? close[0] : undefined
}
