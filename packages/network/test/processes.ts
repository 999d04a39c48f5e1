/**
 * What the namespace tests need to see processes: each one's parent and name from /proc, those
 * whose command line holds a path, the ordinary user to run as, and a bounded wait for a condition.
 */
import { execFileSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'

/** A user id and group id to spawn as. */
export interface Ids {
  readonly uid: number
  readonly gid: number
}

/** The ordinary user `tv-ordinary`, when this runs as root and it exists. */
function ordinaryUser(): Ids | undefined {
  if (process.getuid?.() !== 0) return undefined
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'tv-ordinary'], { encoding: 'utf8' }).trim())
    return { uid: id('-u'), gid: id('-g') }
  } catch {
    return undefined
  }
}

const ordinary = ordinaryUser()

/** Whom the tests run as: this process's user, and the ordinary user where there is one. */
export const users: readonly { readonly name: string; readonly ids: Ids | undefined }[] = [
  { name: process.getuid?.() === 0 ? 'root' : 'the current user', ids: undefined },
  ...(ordinary !== undefined ? [{ name: 'the ordinary user tv-ordinary', ids: ordinary }] : []),
]

/** Its /proc/PID/stat: parent and name, or undefined once it is gone (a zombie counts as gone). */
export function statOf(pid: number): { readonly ppid: number; readonly name: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = text.lastIndexOf(')')
    const [state, ppid] = text.slice(close + 2).split(' ')
    if (state === 'Z') return undefined
    return { ppid: Number(ppid), name: text.slice(text.indexOf('(') + 1, close) }
  } catch {
    return undefined
  }
}

/** Whether `pid` runs (a zombie does not). */
export const alive = (pid: number) => statOf(pid) !== undefined

/** Every process but this one. */
export function pids(): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid !== process.pid)
}

/** The live processes whose command line holds `needle` (the bridge and the connector keep the helper's). */
export function running(needle: string): number[] {
  return pids().filter((pid) => {
    try {
      return alive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
    } catch {
      return false
    }
  })
}

/** The live child of `pid` named `name` (`toolvisor-netns`: the bridge; `netns-connector`). */
export function childNamed(pid: number, name: string): number | undefined {
  return pids().find((child) => {
    const stat = statOf(child)
    return stat?.ppid === pid && stat.name === name
  })
}

/** Polls `check` every 20 ms until it holds or `ms` passed; its last answer. */
export async function until(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

let sharedDir: string | undefined

/**
 * `path` where the ordinary user can run or read it: a copy in a directory of mode 0755 under the
 * system's temporary directory (made once, removed when this process exits). A clone of the
 * repository may sit below a directory only root enters (`mktemp -d` gives 0700, as CI's does),
 * where the ordinary user could not reach the built helper or a fixture.
 */
export function reachable(path: string): string {
  if (sharedDir === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'tvnet-shared-'))
    chmodSync(made, 0o755)
    process.once('exit', () => rmSync(made, { recursive: true, force: true }))
    sharedDir = made
  }
  const copy = join(sharedDir, basename(path))
  if (!existsSync(copy)) copyFileSync(path, copy)
  chmodSync(copy, statSync(path).mode & 0o755)
  return copy
}
