import { spawn } from 'node:child_process'
import type { Writable } from 'node:stream'
import type { Qualification, SandboxField, SandboxPolicy } from '@toolvisor/launchers'

const prefix = 'toolvisor-landlock: '

/** Which declared field a launcher failure line (`toolvisor-landlock: <what>: <why>`) is about. */
export function fieldOf(what: string, policy: SandboxPolicy): SandboxField | 'mechanism' {
  if (what.startsWith('--ro ')) return policy.read.includes(what.slice(5)) ? 'fs.read' : 'mechanism'
  if (what.startsWith('--rw ')) {
    const path = what.slice(5)
    if (policy.write.includes(path)) return 'fs.write'
    return path === '/tmp' ? 'tmp' : 'mechanism'
  }
  if (what.startsWith('--user ') || what.startsWith('drop privileges to ')) return 'run_as'
  if (['--deny-tcp', '--tcp-connect', '--tcp-bind'].some((flag) => what.startsWith(flag))) return 'net'
  return 'mechanism'
}

function fixFor(field: SandboxField | 'mechanism', what: string): string | undefined {
  switch (field) {
    case 'fs.read':
    case 'fs.write':
      return `create ${what.slice(5)}, or remove it from ${field}`
    case 'tmp':
      return 'create /tmp, or declare tmp: private with --sandbox bwrap'
    case 'run_as':
      return 'create the user (and group), or fix run_as'
    default:
      return undefined
  }
}

/**
 * Runs the launcher exactly as `wrap` would, with `true` as the tool and the filter `program` on
 * descriptor 3: every rule path is opened, the user looked up and switched to, the filter and the
 * ruleset applied. Exit 125 is the launcher refusing; 0 (or 126/127 when `true` is not on PATH,
 * which happens only after every restriction was applied) means the sandbox can be set up.
 */
export function preflight(
  launcher: string,
  args: readonly string[],
  policy: SandboxPolicy,
  program: Uint8Array,
): Promise<Qualification> {
  return new Promise((resolve) => {
    const child = spawn(launcher, ['--seccomp-fd', '3', ...args, 'true'], {
      cwd: '/',
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      timeout: 10_000,
      killSignal: 'SIGKILL',
    })
    let stderr = ''
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk
    })
    const data = child.stdio[3] as Writable | null
    data?.on('error', () => {}) // the launcher may refuse before it reads the program
    data?.end(program)
    child.on('error', (error) => {
      resolve({ ok: false, field: 'mechanism', reason: `the Landlock launcher failed: ${error.message}` })
    })
    child.on('close', (code, signal) => resolve(verdict(code, signal, stderr, policy)))
  })
}

/** What the preflight's exit means. */
function verdict(
  code: number | null,
  signal: NodeJS.Signals | null,
  stderr: string,
  policy: SandboxPolicy,
): Qualification {
  if (code === 0 || code === 126 || code === 127) return { ok: true }
  const line = stderr
    .split('\n')
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length)
  if (code !== 125 || line === undefined) {
    const detail = stderr.trim() || (signal === null ? `exit status ${code}` : `killed by ${signal}`)
    return { ok: false, field: 'mechanism', reason: `the Landlock launcher failed: ${detail}` }
  }
  const split = line.lastIndexOf(': ')
  const what = split < 0 ? line : line.slice(0, split)
  const field = fieldOf(what, policy)
  const fix = fixFor(field, what)
  const reason = `the Landlock launcher refused: ${line}`
  return fix === undefined ? { ok: false, field, reason } : { ok: false, field, reason, fix }
}
