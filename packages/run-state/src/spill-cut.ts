/**
 * Where a spill file stops short of its stream (decision 0092, F7 of the 2026-12-01 review): each
 * stream's spill keeps its first bytes up to the cap (`spillBytes`) and while the state
 * directory's budget (`stateBytes`) lasts, and drops the rest; the newest bytes stay in memory (the
 * tail). The sentences here are what every model-facing text says of it: one wording, owned here.
 */

/** Why a spill file holds only a stream's first bytes, and how many. */
export interface SpillCut {
  /** Bytes the spill file holds: bytes 0 to `kept` of the stream. */
  readonly kept: number
  /** `cap`: the stream reached `spillBytes`; `budget`: the state directory's `stateBytes` was spent. */
  readonly why: 'cap' | 'budget'
  /** The bound that stopped it, in bytes (`spillBytes` or `stateBytes`). */
  readonly bound: number
}

/** What a spill asks of the disk budget before it writes (the `DiskBudget` of the runtime). */
export interface SpillAllowance {
  /** The budget, in bytes (`stateBytes`). */
  readonly budget: number
  /** Takes up to `bytes` of the budget; returns how many may be written (fewer, or 0, once it is spent). */
  take(bytes: number): number
}

/** Why the bytes past `cut.kept` were not kept, as a clause. */
export function cutReason(cut: SpillCut): string {
  return cut.why === 'cap'
    ? `the spill file's cap is ${cut.bound} bytes`
    : `the state directory's disk budget of ${cut.bound} bytes was spent`
}

/** `N bytes past the first K were not kept: <reason>` for a stream of `total` bytes. */
export function spillCutText(cut: SpillCut, total: number): string {
  return `${total - cut.kept} bytes past the first ${cut.kept} were not kept: ${cutReason(cut)}`
}

/**
 * What the spill file holds of the line at `offset`, `length` bytes long, as the note of an
 * overlong line says it: `the spill file holds it whole`, or how much of it was not kept and why.
 */
export function lineKeptText(
  spill: { readonly cut: SpillCut | undefined; readonly failed: boolean },
  offset: number,
  length: number,
): string {
  if (spill.failed) return 'the spill file could not be written'
  const cut = spill.cut
  if (cut === undefined || cut.kept >= offset + length) return 'the spill file holds it whole'
  if (cut.kept <= offset) return `none of it was kept: ${cutReason(cut)}`
  const held = cut.kept - offset
  return `the spill file holds its first ${held} bytes; the other ${length - held} were not kept: ${cutReason(cut)}`
}
