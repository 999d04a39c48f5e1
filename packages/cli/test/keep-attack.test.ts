// The keepers as the attacker sees them (issue 33, decision 0113): a sandboxed bash command of
// `serve --keep-processes`, run as root and as an ordinary user, tries to reach the keepers'
// directory, their secret and their sockets (which would let it type into another session's
// process or read its output). Each is refused: the state directory is masked from the sandbox.
import { type ChildProcess, spawn } from 'node:child_process'
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { procStat } from '@toolvisor/containment'
import {
  createTestUser,
  readableBy,
  type TestUser,
  unreachableCheckout,
} from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { bin } from './helpers.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

const root = process.getuid?.() === 0

/** A directory outside /tmp (a sandbox's /tmp is its own), owned by `user` when given. */
function ownDir(prefix: string, user?: TestUser): string {
  const dir = mkdtempSync(join('/var/tmp', prefix))
  if (user) chownSync(dir, user.uid, user.gid)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The keepers of `state` (their command line names its keep directory). */
function keeperPids(state: string): number[] {
  return pids().filter((pid) => cmdline(pid).includes(`${state}/keep/`))
}

/** Every process below `roots`, found by their parents. */
function descendantsOf(roots: readonly number[]): number[] {
  const parent = new Map(pids().map((pid) => [pid, procStat(pid)?.ppid]))
  const found = new Set<number>()
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, ppid] of parent)
      if (!found.has(pid) && ppid !== undefined && (roots.includes(ppid) || found.has(ppid))) {
        found.add(pid)
        grew = true
      }
  }
  return [...found]
}

const pids = () =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
}

async function serveAs(user: TestUser | undefined, mechanism: string, state: string, work: string) {
  writeFileSync(join(state, 'toolvisor.json'), JSON.stringify({ toolboxes: [] }))
  if (user) chownSync(join(state, 'toolvisor.json'), user.uid, user.gid)
  const args = [bin, 'serve', '--listen', '127.0.0.1:0', '--config', join(state, 'toolvisor.json')]
  args.push(
    '--state-dir',
    state,
    '--keep-processes',
    '--bash',
    '--sandbox',
    mechanism,
    '--bash-sandbox',
    'read-only',
  )
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: work,
    stdio: ['ignore', 'ignore', 'pipe'],
    // As the ordinary user itself (its uid and group, no other group): what most people run.
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  })
  cleanups.push(() => {
    child.kill('SIGKILL')
    // The keepers and everything below them (what a sandbox started is its own children): nothing is left.
    const keepers = keeperPids(state)
    for (const pid of [...keepers, ...descendantsOf(keepers)])
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone
      }
  })
  let stderr = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      const found = / at (http:\S+\/mcp) /.exec(stderr)
      if (found) resolve(found[1]!)
    })
    child.once('exit', () => reject(new Error(`serve ended: ${stderr}`)))
  })
  const client = new Client({ name: 'attacker', version: '0' })
  const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
  const headers = { authorization: `Bearer ${token}`, 'x-toolvisor-session': 'mallory' }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  cleanups.push(() => client.close())
  return client
}

describe('a sandboxed command of serve --keep-processes cannot reach the keepers', () => {
  for (const mechanism of ['bwrap', 'landlock'])
    for (const as of ['root', 'an ordinary user'] as const)
      it.skipIf(as === 'an ordinary user' && !root)(
        `${mechanism}, as ${as}${as === 'an ordinary user' && !root ? ' (skipped: making a second user needs root)' : ''}: the keep directory, its secret and every keeper socket are refused`,
        async (context) => {
          const user = as === 'root' ? undefined : createTestUser()
          if (user) cleanups.push(() => user.remove())
          // A checkout under a 0700 home or `mktemp -d`: that user cannot even run toolvisor from it.
          if (user && !readableBy(user.user, bin)) return context.skip(unreachableCheckout(user.user, bin))
          const state = ownDir('tv-keep-attack-state-', user)
          const work = ownDir('tv-keep-attack-work-', user)
          // The read-only mode's commands run as the sandbox user under root: the workspace is theirs to read.
          chmodSync(work, 0o755)
          const client = await serveAs(user, mechanism, state, work)
          const call = async (args: Record<string, unknown>) =>
            (
              (await client.callTool({ name: 'bash', arguments: args })) as {
                content: Array<{ text: string }>
              }
            ).content
              .map((c) => c.text)
              .join('\n')
          // A kept command exists: its keeper's socket is there to be found.
          expect(await call({ command: 'sleep 60', description: 'kept', run_in_background: true })).toBe(
            'started background task bash-1',
          )
          const keep = join(state, 'keep')
          expect(readdirSync(keep).some((name) => /^[0-9a-f]{16}$/.test(name))).toBe(true)
          const secret = readFileSync(join(keep, 'secret'), 'utf8').trim()
          const probe = [
            `ls ${keep}`,
            `cat ${keep}/secret`,
            `for s in ${keep}/*/sock; do python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONNECTED')" "$s"; done`,
          ].join('; ')
          const said = await call({ command: probe, description: 'attack' })
          expect(said).not.toContain(secret)
          expect(said).not.toContain('CONNECTED')
          expect(said).not.toMatch(/[0-9a-f]{16}/)
        },
        60_000,
      )
})
