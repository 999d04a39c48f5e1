import { describe, expect, it } from 'vitest'
import { lineKeptText, spillCutText } from './spill-cut.js'

const cap = { kept: 1000, why: 'cap', bound: 1000 } as const
const budget = { kept: 600, why: 'budget', bound: 5000 } as const

describe('what a cut spill file says of itself (decision 0092)', () => {
  it('says how many bytes past the first ones were not kept, and why', () => {
    expect(spillCutText(cap, 4000)).toBe(
      "3000 bytes past the first 1000 were not kept: the spill file's cap is 1000 bytes",
    )
    expect(spillCutText(budget, 700)).toBe(
      "100 bytes past the first 600 were not kept: the state directory's disk budget of 5000 bytes was spent",
    )
  })

  it('tells of an overlong line: whole, in part, or none of it', () => {
    const spill = (cut: typeof cap | undefined, failed = false) => ({ cut, failed })
    expect(lineKeptText(spill(undefined), 0, 5000)).toBe('the spill file holds it whole')
    expect(lineKeptText(spill(cap), 100, 900)).toBe('the spill file holds it whole')
    expect(lineKeptText(spill(cap), 400, 2000)).toBe(
      "the spill file holds its first 600 bytes; the other 1400 were not kept: the spill file's cap is 1000 bytes",
    )
    expect(lineKeptText(spill(cap), 1000, 2000)).toBe(
      "none of it was kept: the spill file's cap is 1000 bytes",
    )
    expect(lineKeptText(spill(undefined, true), 0, 10)).toBe('the spill file could not be written')
  })
})
