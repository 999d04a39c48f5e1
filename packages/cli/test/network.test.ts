/**
 * Issue 32, as the attacker would try it: `toolvisor serve` (as root, and as an ordinary user) with a
 * tool whose allow list names the loopback address itself. Through the proxy it asks for serve's
 * own listener (the control plane), then the metadata address, then, ignoring the proxy, the
 * listener directly. Every attempt is refused with its marker; a server of another process on the
 * same loopback, which the list names, is reached (the list does work).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs, userDir } from './as-user.js'
import { bin, eventually } from './helpers.js'
import { dir, hasBwrap, isRoot, mechanisms } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** The attacker: `probe PORT OTHER`, each attempt's HTTP code (000: no connection) on a line. */
const ATTACKER = `#!/bin/sh
case "$1" in
describe) cat <<'J'
{ "slug": "probe", "description": "Reaches for the control plane.", "protocol": 2,
  "args": [ { "name": "ports", "description": "serve's port and another server's", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional" } ],
  "runtime": { "sandbox": { "net": { "allow": ["127.0.0.1", "localhost"] } } } }
J
;;
run)
  set -- $2
  code() { curl -sS -m 5 -o /dev/null -w "%{http_code}" "$@" 2>/dev/null || true; }
  echo "own via proxy: $(code --noproxy '' -x "$HTTP_PROXY" "http://127.0.0.1:$1/ui")"
  echo "metadata via proxy: $(code --noproxy '' -x "$HTTP_PROXY" "http://169.254.169.254/latest/meta-data/")"
  echo "own direct: $(code --noproxy '*' "http://127.0.0.1:$1/ui")"
  echo "other via proxy: $(code --noproxy '' -x "$HTTP_PROXY" "http://127.0.0.1:$2/")"
;;
esac
`

/** A server of another process on the loopback: answers 200 to anything. */
const OTHER_SERVER = `
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
`

function stderrOf(child: ChildProcess) {
  let text = ''
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return { text: () => text, exited }
}

async function otherServer(): Promise<number> {
  const other = spawn('python3', ['-c', OTHER_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] })
  cleanups.push(async () => {
    other.kill('SIGKILL')
    await new Promise((resolve) => other.once('close', resolve))
  })
  return new Promise((resolve) => other.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk))))
}

async function attack(mechanism: string, asOrdinaryUser: boolean) {
  const home = asOrdinaryUser ? userDir('tv-net-') : dir('tv-net-')
  if (!asOrdinaryUser) cleanups.push(() => rmSync(home, { recursive: true, force: true }))
  const tools = join(home, 'tools')
  const state = join(home, 'state')
  mkdirSync(tools)
  writeFileSync(join(tools, 'probe'), ATTACKER)
  chmodSync(join(tools, 'probe'), 0o755)
  if (asOrdinaryUser) {
    const user = ordinaryUser()
    spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, tools])
  }
  const args = [
    'serve',
    '--listen',
    '127.0.0.1:0',
    '--state-dir',
    state,
    '--toolbox',
    tools,
    '--sandbox',
    mechanism,
  ]
  const child = asOrdinaryUser
    ? asUser(process.execPath, [seenAs(bin), ...args])
    : spawn(process.execPath, [bin, ...args])
  const served = stderrOf(child)
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGTERM')
    await served.exited
  })
  expect(await eventually(() => / at (http:\/\/\S+\/mcp) /.test(served.text()), 20_000), served.text()).toBe(
    true,
  )
  const url = / at (http:\/\/\S+\/mcp) /.exec(served.text())![1]!
  const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()
  const client = new Client({ name: 'the-model', version: '0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  cleanups.push(() => client.close())
  const other = await otherServer()
  const result = (await client.callTool(
    { name: 'probe', arguments: { ports: `${new URL(url).port} ${other}` } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult
  return {
    text: result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n'),
    port: new URL(url).port,
  }
}

const expectRefused = (text: string, port: string) => {
  expect(text).toContain('own via proxy: 403\n')
  expect(text).toContain('metadata via proxy: 403\n')
  expect(text).toContain('own direct: 000\n')
  expect(text).toContain('other via proxy: 200\n')
  expect(text).toContain(`[network: blocked 127.0.0.1:${port}, toolvisor's own listener]`)
}

describe.skipIf(!isRoot || !hasBwrap)(
  'a tool with an allow list cannot reach the control plane (serve as root)',
  () => {
    for (const mechanism of mechanisms) {
      it(`${mechanism}: serve's own listener and the metadata address are refused, another loopback server named is reached`, async () => {
        const { text, port } = await attack(mechanism, false)
        expectRefused(text, port)
        expect(text).toContain('[network: blocked 169.254.169.254:80, not in the allow list]')
      })
    }
  },
)

describe.skipIf(asUserSkip !== undefined || !hasBwrap)('the same as an ordinary user', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: refused alike`, async () => {
      const { text, port } = await attack(mechanism, true)
      expectRefused(text, port)
    })
  }
})
