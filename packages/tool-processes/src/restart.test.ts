import { describe, expect, it } from 'vitest'
import { DEFAULT_RESTART, restartDelay } from './restart.js'

describe('restart backoff (ruling 17)', () => {
  it('is 1, 2, 4 ... 30 s, at most 5 in a row, by default', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => restartDelay(n, DEFAULT_RESTART) / 1000)).toEqual([
      1, 2, 4, 8, 16, 30, 30,
    ])
    expect(DEFAULT_RESTART.max).toBe(5)
  })
})
