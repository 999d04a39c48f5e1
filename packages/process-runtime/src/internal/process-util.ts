import { constants } from 'node:os'
import type { Readable } from 'node:stream'
import { RuntimeError } from '@toolvisor/launchers'
import type { Child } from '../spawner.js'
import type { PreparedTool } from '../types.js'
import { isInside } from './policy.js'

const errnoConstants = constants.errno as Record<string, number>

/** How long to wait for the pipes to close after the process and its group are gone. */
const DRAIN_MS = 500

/**
 * Where a tool starts: its rundir; else, unsandboxed, toolvisor's own working directory; else
 * that directory when it lies inside one of the tool's grants (which its user can reach: checked
 * at load), and the tool's own directory otherwise (toolvisor's may be out of the sandbox user's
 * reach, or not there at all inside the sandbox).
 */
export function workingDirectory(tool: PreparedTool, requested?: string): string {
  const policy = tool.sandbox?.policy
  const grants = policy === undefined ? [] : [policy.toolDir, ...policy.read, ...policy.write]
  if (requested !== undefined) {
    if (policy === undefined || grants.some((grant) => isInside(requested, grant))) return requested
    const why = `the working directory ${requested} lies outside what the sandbox grants; the process was not started`
    throw new RuntimeError('RUNTIME_ERR_CWD', why)
  }
  if (tool.rundir !== undefined) return tool.rundir
  const here = process.cwd()
  if (policy === undefined) return here
  return grants.some((grant) => isInside(here, grant)) ? here : policy.toolDir
}

/** `errno=2 No such file or directory` (from toolvisor-exec) as `ENOENT: No such file or directory`. */
export function errnoText(text: string): string {
  const match = /^errno=(\d+) (.*)$/s.exec(text.trim())
  if (match === null) return text.trim()
  const number = Number(match[1])
  const name = Object.entries(errnoConstants).find(([, value]) => value === number)?.[0]
  return name === undefined ? match[2]! : `${name}: ${match[2]}`
}

/** Resolves when a stream ended, or after a bound (a descendant outside the group may hold it open). */
export function drained(stream: Readable | null | undefined): Promise<void> {
  if (!stream || stream.readableEnded || stream.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stream.destroy()
      resolve()
    }, DRAIN_MS)
    stream.once('close', () => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/** Sends `signal` to a process group; false when the group is gone. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (pid === undefined) return false
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

/**
 * The child's pid when it was spawned; else its spawn failed (ENOENT, EACCES: Node reports it on
 * 'error' and closes the pipes), and `failed` hears why once the pipes closed.
 */
export function spawnedPid(child: Child, path: string, failed: (why: string) => void): number | undefined {
  let spawnError: Error | undefined
  child.on('error', (error) => {
    spawnError = error
  })
  if (child.pid !== undefined) return child.pid
  child.once('close', () => failed(`cannot start ${path}: ${spawnError?.message ?? 'spawn failed'}`))
  return undefined
}
