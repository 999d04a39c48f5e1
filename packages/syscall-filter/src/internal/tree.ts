import type { Draft } from './bpf.js'

/** What a syscall number leads to: a return value, or the label of an argument check. */
export type Leaf = { readonly ret: number } | { readonly goto: string }

/** Numbers from `from` up to the next interval's `from` share a leaf. */
export interface Interval {
  readonly from: number
  readonly leaf: Leaf
}

const same = (a: Leaf, b: Leaf) =>
  'ret' in a ? 'ret' in b && a.ret === b.ret : 'goto' in b && a.goto === b.goto

/**
 * The partition of every 32-bit syscall number into runs with one leaf, from the numbers the table
 * names: a number it does not name (a gap, one past its end, x32's) gets `otherwise`.
 */
export function intervals(leaves: ReadonlyMap<number, Leaf>, otherwise: Leaf): Interval[] {
  const numbers = [...leaves.keys()].sort((a, b) => a - b)
  const runs: Interval[] = []
  const add = (from: number, leaf: Leaf) => {
    const last = runs.at(-1)
    if (last === undefined || !same(last.leaf, leaf)) runs.push({ from, leaf })
  }
  if (numbers[0] !== 0) add(0, otherwise)
  numbers.forEach((nr, i) => {
    add(nr, leaves.get(nr)!)
    if (numbers[i + 1] !== nr + 1) add(nr + 1, otherwise)
  })
  return runs
}

/**
 * A binary search over the runs, with the syscall number in the accumulator: each node is one
 * `jge` on the first number of its right half, so a call costs about log2(runs) comparisons,
 * whatever its number. The left half follows the node; the right half is reached by the jump
 * (the assembler adds a long `ja` where it lies beyond 255 instructions). A leaf returns in place
 * or jumps to its argument check.
 */
export function searchTree(runs: readonly Interval[], prefix: string): Draft[] {
  const drafts: Draft[] = []
  let labels = 0
  const emit = (from: number, to: number): void => {
    if (to - from === 1) {
      const { leaf } = runs[from]!
      drafts.push('ret' in leaf ? { op: 'ret', k: leaf.ret } : { op: 'ja', to: leaf.goto })
      return
    }
    const middle = from + Math.floor((to - from) / 2)
    const left = `${prefix}${labels++}`
    const right = `${prefix}${labels++}`
    drafts.push({ op: 'jge', k: runs[middle]!.from, jt: right, jf: left }, { op: 'label', name: left })
    emit(from, middle)
    drafts.push({ op: 'label', name: right })
    emit(middle, to)
  }
  emit(0, runs.length)
  return drafts
}
