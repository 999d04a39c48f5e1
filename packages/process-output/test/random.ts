// Reproducible random data for tests: the same seed gives the same bytes, so a failure can be replayed.

/** A small deterministic generator (mulberry32): the same seed gives the same run, so a failure can be replayed. */
export function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `length` bytes drawn from `random`. */
export function randomBytes(random: () => number, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length + 3)
  for (let i = 0; i < length; i += 4) bytes.writeUInt32LE(Math.floor(random() * 4294967296), i)
  return bytes.subarray(0, length)
}
