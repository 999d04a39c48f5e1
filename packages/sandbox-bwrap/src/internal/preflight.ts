import { execFile, spawn } from 'node:child_process'
import type { Writable } from 'node:stream'
import { promisify } from 'node:util'
import type { RunAsTarget } from '@toolvisor/launchers'
import { syscallFilter } from '@toolvisor/syscall-filter'
import { baseMounts, mountArgs, namespaceArgs } from './args.js'
import type { HostEntry } from './host.js'

const run = promisify(execFile)

/** A user to run the preflight as (the run_as target, so user-namespace limits are met as they will be). */
export interface Ids {
  readonly uid: number
  readonly gid: number
}

/** What a preflight found. */
export type PreflightResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: string; readonly spawned: boolean }

const PREFLIGHT_TIMEOUT_MS = 10_000

/**
 * Runs `bwrap <namespaces> <exec minimum> --seccomp 3 --remount-ro / -- /usr/bin/true`: the same
 * namespaces, mounts and filter a tool with this `net` gets, minus its own grants.
 */
export function preflight(
  bwrap: string,
  layout: readonly HostEntry[],
  net: 'host' | 'none',
  ids: Ids | undefined,
): Promise<PreflightResult> {
  const args = [
    ...namespaceArgs(net),
    ...mountArgs(baseMounts(layout, 'private')),
    '--seccomp',
    '3',
    '--remount-ro',
    '/',
    '--',
    '/usr/bin/true',
  ]
  const who = ids === undefined ? '' : ` as uid ${ids.uid}`
  return new Promise((resolve) => {
    const child = spawn(bwrap, args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      timeout: PREFLIGHT_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      ...(ids === undefined ? {} : { uid: ids.uid, gid: ids.gid }),
    })
    let stderr = ''
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk
    })
    const data = child.stdio[3] as Writable | null | undefined
    data?.on('error', () => {})
    data?.end(syscallFilter({ net, ipc: 'namespaced' }))
    child.on('error', (error) => {
      resolve({ ok: false, spawned: false, reason: `${bwrap} could not be run${who}: ${error.message}` })
    })
    child.on('close', (code, signal) => {
      if (code === 0) return resolve({ ok: true })
      const how = signal === null ? `exited ${code}` : `was killed by ${signal}`
      const said = stderr.trim().replace(/\s*\n\s*/g, '; ')
      resolve({
        ok: false,
        spawned: true,
        reason: `${bwrap} ${how} in its preflight${who}${said ? `: ${said}` : ''}`,
      })
    })
  })
}

/** The uid and gid of a run_as target, or why they cannot be found. */
export async function resolveIds(target: RunAsTarget): Promise<Ids | string> {
  let uid: number
  let gid: number
  try {
    uid = Number((await run('id', ['-u', '--', target.user])).stdout.trim())
    gid = Number((await run('id', ['-g', '--', target.user])).stdout.trim())
  } catch {
    return `no such user "${target.user}"`
  }
  if (target.group !== undefined) {
    try {
      gid = Number((await run('getent', ['group', target.group])).stdout.split(':')[2])
    } catch {
      return `no such group "${target.group}"`
    }
  }
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) return `cannot resolve the ids of "${target.user}"`
  return { uid, gid }
}
