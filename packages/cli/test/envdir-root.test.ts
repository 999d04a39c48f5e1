/**
 * The envdir root of the 2026-12-01 review ("Envdir" under What held): toolvisor accepted a
 * world-readable envdir root without a word, and a bash read-only command (it reads `/`) then read
 * every tool's secrets: `cat <srv>/secrev-env/secret-tool/API_KEY` gave `sk-live-ENVDIR-SECRET`.
 * Like the token file, a root that group or others may read or write is refused at start, unless
 * the operator accepts it with `--envdir-permissions warn` (then it says so on stderr).
 */
import type { ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs, userDir } from './as-user.js'
import { bin, examples } from './helpers.js'
import { rawMcp } from './raw-mcp.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'

const SECRET = 'sk-live-ENVDIR-SECRET'
const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** An envdir root as the report had it: mode 0755, one tool's key 0644, where the sandbox user can look. */
function worldReadableRoot(): string {
  const root = sandboxUserDir(import.meta.dirname, 'secrev-env')
  made.push(root)
  chmodSync(root, 0o755)
  mkdirSync(join(root, 'secret-tool'), { mode: 0o755 })
  writeFileSync(join(root, 'secret-tool', 'API_KEY'), `${SECRET}\n`, { mode: 0o644 })
  return root
}

/** Where bash's read-only mode can run: a folder the sandbox user reads, even when the checkout is out of its reach. */
function workDir(): string {
  const dir = sandboxUserDir(import.meta.dirname, 'secrev-work')
  made.push(dir)
  return dir
}

/** `toolvisor mcp` with bash's read-only mode under bwrap and `root` as its envdir root, in {@link workDir}. */
function bashReadOnly(root: string, ...extra: string[]) {
  const args = ['--bash', '--sandbox', 'bwrap', '--bash-sandbox', 'read-only', '--envdir-root', root]
  return rawMcp([...args, ...extra], { cwd: workDir() })
}

const refused = (root: string) =>
  `toolvisor mcp: --envdir-root ${root}: readable or writable by group or others (mode 0755), so any local user, and a bash command that reads /, can read every tool's secrets: chmod 700 ${root}, or start toolvisor with --envdir-permissions warn to accept it\n`

const skip = !isRoot ? 'needs root: bash runs as the sandbox user' : !hasBwrap ? 'needs bwrap' : undefined

describe.skipIf(skip !== undefined)(`a world-readable envdir root (${skip ?? 'root, bwrap'})`, () => {
  it("is refused at start: a bash read-only command never reads another tool's key", async () => {
    const root = worldReadableRoot()
    const server = bashReadOnly(root)
    const started = await Promise.race([
      server.exited.then(() => false),
      server.initialize().then(() => true),
    ])
    if (started) {
      server.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'bash', arguments: { command: `cat ${root}/secret-tool/API_KEY`, description: 'd' } },
      })
      const answer = await server.waitForMessage((m) => m.id === 1)
      server.child.stdin.end()
      expect(JSON.stringify(answer)).not.toContain(SECRET)
    }
    expect(await server.exited).toBe(2)
    expect(server.stderr()).toBe(refused(root))
  }, 60_000)

  it('is accepted with --envdir-permissions warn, and the warning goes to stderr at start', async () => {
    const root = worldReadableRoot()
    const server = bashReadOnly(root, '--envdir-permissions', 'warn')
    await server.initialize()
    expect(server.stderr()).toContain(
      `toolvisor: warning: --envdir-root ${root}: readable or writable by group or others (mode 0755), so any local user, and a bash command that reads /, can read every tool's secrets: chmod 700 ${root} (accepted: --envdir-permissions warn)\n`,
    )
    server.child.stdin.end()
    expect(await server.exited).toBe(0)
  }, 60_000)
})

function closed(child: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })))
}

describe.skipIf(asUserSkip !== undefined)(
  `as an ordinary user (${asUserSkip ?? 'root makes the user'})`,
  () => {
    it('its own envdir root that others may read is refused at start too', async () => {
      const user = ordinaryUser()
      const home = userDir('tv-envdir-')
      made.push(home)
      const root = join(home, 'env')
      mkdirSync(join(root, 'vault'), { recursive: true })
      writeFileSync(join(root, 'vault', 'API_KEY'), `${SECRET}\n`)
      chmodSync(root, 0o755)
      for (const path of [root, join(root, 'vault'), join(root, 'vault', 'API_KEY')])
        chownSync(path, user.uid, user.gid)
      const tool = seenAs(join(examples, 'echo-args'))
      const run = await closed(
        asUser(process.execPath, [
          seenAs(bin),
          'call',
          tool,
          '{}',
          '--envdir-root',
          root,
          '--state-dir',
          join(home, 'state'),
        ]),
      )
      expect(run).toEqual({ code: 2, stderr: refused(root).replace('toolvisor mcp:', 'toolvisor call:') })
    })
  },
)
