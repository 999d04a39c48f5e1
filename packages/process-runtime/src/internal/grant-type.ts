import type { BigIntStats, Stats } from 'node:fs'

/**
 * What a grant's path is when no grant can be that: the names the fork server sends in
 * `e ID 0 type:I:NAME` (see `native/toolvisor-spawnd.c`). A grant is a directory or a regular
 * file; anything else (a FIFO, a device, a socket, a symlink in its last component) is refused at
 * load and, when a tool put it there since, at every start.
 */
export type OddType = 'fifo' | 'chr' | 'blk' | 'sock' | 'link' | 'other'

const DESCRIPTIONS: Readonly<Record<OddType, string>> = {
  fifo: 'a FIFO',
  chr: 'a character device',
  blk: 'a block device',
  sock: 'a socket',
  link: 'a symlink',
  other: 'neither a directory nor a regular file',
}

/** The type of `stat` when a grant cannot be that, else undefined (a directory, a regular file). */
export function typeOf(stat: Stats | BigIntStats): OddType | undefined {
  if (stat.isDirectory() || stat.isFile()) return undefined
  if (stat.isFIFO()) return 'fifo'
  if (stat.isCharacterDevice()) return 'chr'
  if (stat.isBlockDevice()) return 'blk'
  if (stat.isSocket()) return 'sock'
  return stat.isSymbolicLink() ? 'link' : 'other'
}

/** "a FIFO", "a character device", ...: `type` as a message says it (any unknown name: "neither ..."). */
export function typeDescription(type: string): string {
  return Object.hasOwn(DESCRIPTIONS, type) ? DESCRIPTIONS[type as OddType] : DESCRIPTIONS.other
}
