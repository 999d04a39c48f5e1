#!/usr/bin/env node
// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned below) against
// `toolvisor serve`: its server scenarios over Streamable HTTP, with this folder's toolbox (the
// tools some scenarios call by name) and `expected-failures.yml` (the scenarios that need what only
// a conformance test server has, each with why). The suite needs Node >= 22: it runs on the Node 22
// of `.tools/` when this one is older; toolvisor serve runs on the Node running this script.
// The suite has no option for an Authorization header: a proxy here adds the bearer token, and
// maps its own Host to the server's (a foreign Host goes through as it came: the DNS rebinding
// scenario is about exactly that). Prints one line per scenario and the tally
// `conformance: N passed, N failed`; exits 1 on any unexpected result. `--keep`: keep the results.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeFor, npmCli, ownMajor } from '../node-versions.mjs'

export const CONFORMANCE_VERSION = '0.1.16'
const here = fileURLToPath(new URL('.', import.meta.url))
const root = join(here, '..', '..')
const tools = join(root, '.tools', 'conformance')
const suite = join(tools, 'node_modules', '@modelcontextprotocol', 'conformance')

function fail(message) {
  process.stderr.write(`conformance: ${message}\n`)
  process.exit(1)
}

/** The pinned suite in `.tools/conformance`, installed (by npm running on `node`) when missing. */
function ensureSuite(node) {
  const manifest = join(suite, 'package.json')
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === CONFORMANCE_VERSION)
    return
  process.stderr.write(
    `conformance: installing @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} into .tools/conformance (once)\n`,
  )
  const args = ['install', '--prefix', tools, '--no-save', '--no-audit', '--no-fund', '--loglevel=error']
  const installed = spawnSync(
    node,
    [npmCli(), ...args, `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`],
    {
      encoding: 'utf8',
    },
  )
  if (installed.status !== 0) fail(`npm install failed: ${installed.stderr.trim()}`)
}

/** `toolvisor serve` on a free loopback port with this folder's toolbox; its URL and token. */
async function startServe(state) {
  const config = join(state, 'toolvisor.json')
  writeFileSync(config, JSON.stringify({ toolboxes: [join(here, 'toolbox')] }))
  const bin = join(root, 'packages', 'cli', 'dist', 'bin.js')
  const args = [bin, 'serve', '--listen', '127.0.0.1:0', '--config', config, '--state-dir', state]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`toolvisor serve did not start in 30 s:\n${stderr}`)),
      30_000,
    )
    child.stderr.on('data', () => {
      const found = / at (http:\/\/\S+\/mcp) /.exec(stderr)
      if (found) {
        clearTimeout(timer)
        resolve(found[1])
      }
    })
    child.once('exit', (code) => reject(new Error(`toolvisor serve exited ${code}:\n${stderr}`)))
  })
  return { child, url: new URL(url), token: readFileSync(join(state, 'serve.token'), 'utf8').trim() }
}

/** The proxy that adds the bearer token; resolves with its own base URL. */
async function authProxy(target, token) {
  const proxy = createServer((incoming, answer) => {
    const { port } = proxy.address()
    const own = [`127.0.0.1:${port}`, `localhost:${port}`]
    const mine = own.includes(incoming.headers.host ?? '')
    const host = mine ? target.host : incoming.headers.host
    const origin = own.map((h) => `http://${h}`).includes(incoming.headers.origin ?? '')
      ? `http://${target.host}`
      : incoming.headers.origin
    const headers = {
      ...incoming.headers,
      host,
      ...(origin ? { origin } : {}),
      authorization: `Bearer ${token}`,
    }
    const out = request(
      { host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers },
      (back) => {
        answer.writeHead(back.statusCode ?? 502, back.headers)
        back.pipe(answer)
      },
    )
    out.on('error', () => answer.destroy())
    answer.on('close', () => out.destroy())
    incoming.pipe(out)
  })
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return { proxy, url: `http://127.0.0.1:${proxy.address().port}/mcp` }
}

/** Each scenario's verdict, from the checks the suite saved (FAILURE or WARNING: it did not pass). */
function verdicts(results) {
  const found = new Map()
  for (const dir of readdirSync(results, { recursive: true })) {
    if (!String(dir).endsWith('checks.json')) continue
    const checks = JSON.parse(readFileSync(join(results, String(dir)), 'utf8'))
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    const scenario = String(dir)
      .split('/')[0]
      .replace(/^server-/, '')
      .replace(/-\d{4}-\d{2}-\d{2}T.*$/, '')
    found.set(
      scenario,
      bad.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`),
    )
  }
  return found
}

const node = ownMajor >= 22 ? process.execPath : nodeFor(22)
ensureSuite(node)
const state = mkdtempSync(join(tmpdir(), 'tv-conformance-'))
const results = join(state, 'results')
const serve = await startServe(state)
const { proxy, url } = await authProxy(serve.url, serve.token)
const expected = join(here, 'expected-failures.yml')
const entry = join(suite, 'dist', 'index.js')
const run = spawn(
  node,
  [entry, 'server', '--suite', 'all', '--url', url, '--expected-failures', expected, '-o', results],
  {
    stdio: ['ignore', 'pipe', 'pipe'],
  },
)
let output = ''
run.stdout.on('data', (chunk) => (output += chunk))
run.stderr.on('data', (chunk) => (output += chunk))
const code = await new Promise((resolve) => run.once('exit', resolve))
proxy.close()
serve.child.kill('SIGTERM')
await new Promise((resolve) => serve.child.once('exit', resolve))

const allowed = new Set(
  readFileSync(expected, 'utf8')
    .split('\n')
    .map((line) => /^\s*-\s*([\w-]+)/.exec(line)?.[1])
    .filter(Boolean),
)
let passed = 0
let failed = 0
const found = verdicts(results)
for (const [scenario, bad] of [...found].sort()) {
  const ok = bad.length === 0
  const excused = !ok && allowed.has(scenario)
  if (ok && allowed.has(scenario))
    failed++ // a stale entry: it passes now, so the file is wrong
  else if (ok) passed++
  else if (!excused) failed++
  const verdict = ok
    ? allowed.has(scenario)
      ? 'PASSES, but is listed as expected to fail'
      : 'pass'
    : excused
      ? 'not applicable (expected-failures.yml)'
      : `FAIL: ${bad.join('; ')}`
  process.stdout.write(`  ${scenario}: ${verdict}\n`)
}
if (found.size === 0 || (code !== 0 && failed === 0)) {
  process.stdout.write(output)
  failed = Math.max(failed, 1)
}
if (!process.argv.includes('--keep')) rmSync(state, { recursive: true, force: true })
else process.stdout.write(`results kept in ${results}\n`)
const excusedCount = [...found].filter(([s, bad]) => bad.length > 0 && allowed.has(s)).length
process.stdout.write(
  `conformance ${CONFORMANCE_VERSION} (suite on Node ${spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()}, serve on ${process.version}): ${passed} passed, ${failed} failed, ${excusedCount} not applicable\n`,
)
process.exit(failed > 0 ? 1 : 0)
