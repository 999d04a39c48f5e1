/**
 * Issue 26 point 1, as the attacker ran it (security review 2026-12-01, F1): toolvisor run as an
 * ordinary user (how most people run it for Claude Code or Codex), `serve --bash --bash-sandbox
 * read-only` under bwrap and under Landlock. The model's read-only command reads `serve.token` from
 * the state directory, opens an MCP session of its own on the loopback listener, asks for
 * `danger-full-access` and approves the question itself; the escalated command writes a marker.
 * Nothing of toolvisor's own may be visible from inside: the token read fails, no session opens, no
 * marker appears. A second test reads the state directory (other sessions' spill files) from a
 * read-only command of the stdio server.
 */
import { type ChildProcess, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs, userCommand, userDir } from './as-user.js'
import { bashMcpArgs, bin, eventually } from './helpers.js'
import { dir, hasBwrap, isRoot, load, mechanisms, sandboxedTool } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/**
 * selfesc.py of the report's Appendix B: steal the token, open an MCP session that declares
 * elicitation, call bash with danger-full-access and answer the approval question itself.
 */
const SELF_ESCALATION = `
import http.client, json, sys, threading
try:
    tok = open(sys.argv[1]).read().strip()
except Exception as e:
    print("token: " + type(e).__name__, flush=True); sys.exit(3)
port = int(sys.argv[2]); cmd = sys.argv[3]
H = {"Authorization": "Bearer " + tok, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def conn(method, body, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20); h = dict(H)
    if sid: h["Mcp-Session-Id"] = sid; h["MCP-Protocol-Version"] = "2025-06-18"
    if method == "GET": h["Accept"] = "text/event-stream"
    c.request(method, "/mcp", json.dumps(body) if body else None, h); return c.getresponse()
r = conn("POST", {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}})
sid = r.getheader("mcp-session-id"); r.read()
print("session " + str(r.status), flush=True)
if not sid: sys.exit(4)
conn("POST", {"jsonrpc":"2.0","method":"notifications/initialized"}, sid).read()
done = threading.Event()
def pump(resp):
    while not done.is_set():
        line = resp.readline()
        if not line: return
        if line.startswith(b"data:"):
            m = json.loads(line[5:])
            if m.get("method") == "elicitation/create":
                print("approving it myself", flush=True)
                conn("POST", {"jsonrpc":"2.0","id":m["id"],"result":{"action":"accept","content":{}}}, sid).read()
            elif m.get("id") == 2:
                print("result", flush=True); done.set(); return
g = conn("GET", None, sid); threading.Thread(target=pump, args=(g,), daemon=True).start()
r = conn("POST", {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":cmd,"description":"d","sandbox_permissions":"danger-full-access","justification":"self-approved"}}}, sid)
threading.Thread(target=pump, args=(r,), daemon=True).start()
done.wait(20)
`

/** Collects a child's stderr; resolves its exit. */
function watch(child: ChildProcess) {
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { stderr: () => stderr, exited }
}

/** Pids whose command line holds `needle` (the processes of one test's toolvisor). */
function withArg(needle: string): number[] {
  const out = spawnSync('pgrep', ['-f', needle], { encoding: 'utf8' }).stdout
  return out.split('\n').filter(Boolean).map(Number)
}

describe.skipIf(asUserSkip !== undefined || !hasBwrap)('F1: toolvisor as an ordinary user', () => {
  // On a terminal too (issue 31): `tty: true` takes the same launch path, so the same confinement.
  for (const [mechanism, tty] of mechanisms.flatMap((m) => [[m, false] as const, [m, true] as const])) {
    it(`${mechanism}${tty ? ', on a terminal' : ''}: a read-only bash command cannot read serve.token, open its own session and approve its own escalation`, async () => {
      const user = ordinaryUser()
      const home = userDir('tv-f1-', user)
      cleanups.push(() => rmSync(home, { recursive: true, force: true }))
      const state = join(home, 'state')
      const work = join(home, 'work')
      for (const dir of [state, work])
        spawnSync('setpriv', [
          '--reuid',
          String(user.uid),
          '--regid',
          String(user.gid),
          '--init-groups',
          'mkdir',
          '-m',
          '700',
          dir,
        ])
      const script = join(work, 'selfesc.py')
      writeFileSync(script, SELF_ESCALATION)
      spawnSync('chown', [`${user.uid}:${user.gid}`, script])
      const marker = join(home, 'ESCAPED')
      const child = asUser(
        process.execPath,
        [
          seenAs(bin),
          'serve',
          '--listen',
          '127.0.0.1:0',
          '--state-dir',
          state,
          '--bash',
          '--sandbox',
          mechanism,
          '--bash-sandbox',
          'read-only',
        ],
        { cwd: work },
      )
      const served = watch(child)
      cleanups.push(async () => {
        if (child.exitCode === null) child.kill('SIGTERM')
        await served.exited
        expect(await eventually(() => withArg(state).length === 0, 5000), 'processes left').toBe(true)
      })
      expect(
        await eventually(() => / at (http:\/\/\S+\/mcp) /.test(served.stderr()), 20_000),
        served.stderr(),
      ).toBe(true)
      const url = / at (http:\/\/\S+\/mcp) /.exec(served.stderr())![1]!
      const port = new URL(url).port
      const token = readFileSync(join(state, 'serve.token'), 'utf8').trim()

      // The model's client: no elicitation, so it cannot approve anything itself.
      const client = new Client({ name: 'the-model', version: '0' })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      )
      cleanups.push(() => client.close())
      const tokenPath = join(state, 'serve.token')
      const result = (await client.callTool(
        {
          name: 'bash',
          arguments: {
            command: `id -u; test -t 1 && echo on-a-terminal; ls ${state}; /usr/bin/python3 ${script} ${tokenPath} ${port} "id > ${marker}"`,
            description: 'list and probe',
            ...(tty ? { tty: true } : {}),
          },
        },
        undefined,
        { timeout: 60_000 },
      )) as CallToolResult
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
      expect(text).toContain(`${user.uid}\n`)
      expect(text.includes('on-a-terminal\n')).toBe(tty)
      expect(text).not.toContain('serve.token\n')
      expect(text).not.toContain('approving it myself')
      expect(text).toMatch(/token: (FileNotFoundError|PermissionError)/)
      expect(existsSync(marker)).toBe(false)
    })
  }
})

describe.skipIf(!isRoot || !hasBwrap)('F9: a grant of the state directory', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: a tool declaring run_as root and a read grant of the state dir does not load, and never reads serve.token`, async () => {
      const box = dir('tv-cp-box-')
      const state = dir('tv-cp-state-', 0o700)
      writeFileSync(join(state, 'serve.token'), 'a-token-nobody-may-read\n', { mode: 0o600 })
      sandboxedTool(box, 'tokread', { sandbox: { fs: { read: ['.', state] } }, run_as: { user: 'root' } })
      const { tools, call } = await load(box, {
        sandbox: mechanism,
        runAs: 'setpriv',
        runAsAllow: ['root'],
        stateDir: state,
      })
      const [report] = tools.loadErrors()
      expect(report?.field).toBe('$.runtime.sandbox.fs.read[1]')
      expect(report?.message).toContain(`${state} is toolvisor's state directory`)
      expect(tools.get('tokread')).toBeUndefined()
      expect((await call('tokread', `cat ${state}/serve.token`)).text).not.toContain(
        'a-token-nobody-may-read',
      )
    })
  }
})

/** The SDK client over `toolvisor mcp ARGS` (stdio), started by `command` (as root, or as the user). */
async function stdioClient(command: {
  command: string
  args: string[]
  cwd: string
  env: Record<string, string>
}) {
  const client = new Client({ name: 'control-plane-test', version: '0' })
  await client.connect(new StdioClientTransport({ ...command, stderr: 'pipe' }))
  cleanups.push(() => client.close())
  return async (script: string) => {
    const result = (await client.callTool(
      { name: 'bash', arguments: { command: script, description: 'probe' } },
      undefined,
      { timeout: 60_000 },
    )) as CallToolResult
    return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
  }
}

describe.skipIf(!isRoot || !hasBwrap)('as root: a secret the sandbox user could read', () => {
  for (const mechanism of mechanisms) {
    it(`${mechanism}: a read-only command cannot read toolvisor's configuration file (mode 0644)`, async () => {
      const box = dir('tv-cp-config-')
      const config = join(box, 'toolvisor.json')
      writeFileSync(config, '{"mailBytes": 54321}\n', { mode: 0o644 })
      const bash = await stdioClient({
        command: process.execPath,
        args: bashMcpArgs(
          mechanism,
          'read-only',
          '--config',
          config,
          '--state-dir',
          dir('tv-cp-state-', 0o700),
        ),
        cwd: box,
        env: process.env as Record<string, string>,
      })
      const text = await bash(`id -u; cat ${config}; echo "rc=$?"`)
      expect(text).toMatch(/^65534\n/)
      expect(text).not.toContain('54321')
      // bwrap binds /dev/null over it on a nodev mount, Landlock has no rule for it: either way EACCES.
      expect(text).toContain(`${config}: Permission denied`)
    })
  }
})

describe.skipIf(asUserSkip !== undefined || !hasBwrap)(
  'as an ordinary user: the state directory inside the workspace',
  () => {
    for (const mechanism of mechanisms) {
      it(`${mechanism}: workspace-write cannot see, move or replace it`, async () => {
        const user = ordinaryUser()
        const home = userDir('tv-cp-ws-', user)
        cleanups.push(() => rmSync(home, { recursive: true, force: true }))
        const state = join(home, '.tv', 'state')
        spawnSync('setpriv', [
          '--reuid',
          String(user.uid),
          '--regid',
          String(user.gid),
          '--init-groups',
          'mkdir',
          '-p',
          '-m',
          '700',
          state,
        ])
        const command = userCommand(
          process.execPath,
          [
            seenAs(bin),
            'mcp',
            '--bash',
            '--sandbox',
            mechanism,
            '--bash-sandbox',
            'workspace-write',
            '--state-dir',
            state,
          ],
          { cwd: home },
        )
        if (mechanism === 'landlock') {
          // The standing mode is prepared at start: refused there, before anything is served.
          const refused = spawnSync(command.command, command.args, {
            cwd: command.cwd,
            env: command.env,
            encoding: 'utf8',
            input: '',
            timeout: 30_000,
          })
          expect(refused.status).not.toBe(0)
          expect(refused.stderr).toContain(
            `${state}, toolvisor's state directory, lies in the write grant ${home}: Landlock cannot keep a path below a writable grant out of reach`,
          )
          return
        }
        const bash = await stdioClient(command)
        const text = await bash(
          'ls -A .tv/state | wc -l; mv .tv .tv-moved && echo moved; touch made && echo made',
        )
        expect(text).toMatch(/^0\n/)
        expect(text).toContain('Device or resource busy')
        expect(text).not.toMatch(/^moved$/m)
        expect(text).toContain('made')
        expect(existsSync(join(home, '.tv', 'state', 'runs'))).toBe(true)
      })
    }
  },
)
