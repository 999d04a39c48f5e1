#!/usr/bin/env node
// The official MCP conformance suite (@modelcontextprotocol/conformance) against `toolvisor serve`,
// in both eras serve speaks on its one endpoint (decision 0109), each scored by its own release,
// pinned below and installed side by side: 0.1.16 (`.tools/conformance`) scores 2025-11-25 with
// every server scenario (`--suite all`); 0.2.0-alpha.12 (`.tools/conformance-2026`) scores
// 2026-07-28 with what that revision requires (`--requirements 2026-07-28`, run at its stateless
// wire). Both run against one serve with this folder's toolbox (the tools some scenarios call by
// name). Each era has its expected-failures file, `expected-failures.yml` and
// `expected-failures-2026.yml`: what needs what only a conformance test server has, each with why;
// the 2026 file may name single checks (`scenario:check-id`, which 0.1.16 would not understand).
// What the 2026 requirement set runs without scoring (the Tasks extension, pending scenarios) is
// shown as `not scored` and never counted. The suite needs Node >= 22: it runs on the Node 22 of
// `.tools/` when this one is older; toolvisor serve runs on the Node running this script.
// The suite has no option for request headers: a proxy here adds the bearer token and
// `x-toolvisor-session: conformance` (required of a 2026-07-28 request, harmless in 2025), and maps
// its own Host to the server's (a foreign Host goes through as it came: the DNS rebinding scenario
// is about exactly that). Prints, era by era, one line per scenario and the tally
// `conformance VERSION ERA (...): N passed, N failed, N not applicable[, N not scored]`, each of
// which scripts/ci.mjs counts; exits 1 on any unexpected result (a failure not listed, a listed
// scenario or check that passes or did not run). `--keep`: keep the results.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { nodeFor, npmCli, ownMajor } from '../node-versions.mjs'

/** The suite that scores 2025-11-25: every server scenario, at that revision's wire. */
export const CONFORMANCE_VERSION = '0.1.16'
/** The first suite that scores 2026-07-28: what that revision requires, at its wire. */
export const CONFORMANCE_2026_VERSION = '0.2.0-alpha.12'
/** The toolvisor session every 2026-07-28 request names (`x-toolvisor-session`, decision 0109). */
export const CONFORMANCE_SESSION = 'conformance'
const here = fileURLToPath(new URL('.', import.meta.url))
const root = join(here, '..', '..')

/** The eras scored: each its own suite in its own folder of `.tools/`, its arguments, its exclusions. */
const ERAS = [
  {
    era: '2025-11-25',
    version: CONFORMANCE_VERSION,
    tools: join(root, '.tools', 'conformance'),
    args: ['--suite', 'all'],
    expected: 'expected-failures.yml',
  },
  {
    era: '2026-07-28',
    version: CONFORMANCE_2026_VERSION,
    tools: join(root, '.tools', 'conformance-2026'),
    args: ['--requirements', '2026-07-28'],
    expected: 'expected-failures-2026.yml',
  },
]

function fail(message) {
  process.stderr.write(`conformance: ${message}\n`)
  process.exit(1)
}

const suiteOf = (era) => join(era.tools, 'node_modules', '@modelcontextprotocol', 'conformance')

/** The era's pinned suite in its folder of `.tools/`, installed (by npm running on `node`) when missing. */
function ensureSuite(node, era) {
  const manifest = join(suiteOf(era), 'package.json')
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === era.version) return
  const folder = relative(root, era.tools)
  process.stderr.write(
    `conformance: installing @modelcontextprotocol/conformance@${era.version} into ${folder} (once)\n`,
  )
  const args = ['install', '--prefix', era.tools, '--no-save', '--no-audit', '--no-fund', '--loglevel=error']
  const installed = spawnSync(node, [npmCli(), ...args, `@modelcontextprotocol/conformance@${era.version}`], {
    encoding: 'utf8',
  })
  if (installed.status !== 0) fail(`npm install failed: ${installed.stderr.trim()}`)
}

/**
 * The scenarios a requirement set runs but never scores (`not_scored` of the suite's
 * `requirements/<revision>.yaml`: an extension, or pending against the suite's own server), each
 * with its reason. Empty for a run that names no requirement set.
 */
function notScored(era) {
  const at = era.args.indexOf('--requirements')
  if (at < 0) return new Map()
  const file = join(suiteOf(era), 'requirements', `${era.args[at + 1]}.yaml`)
  const text = readFileSync(file, 'utf8')
  const list = text.slice(text.indexOf('\nnot_scored:'))
  const found = new Map()
  for (const block of list.split(/\n\s*- scenario: /).slice(1)) {
    const name = /^[\w/-]+/.exec(block)?.[0]
    const leg = /\bleg: (\w+)/.exec(block)?.[1]
    const reason = /\breason: ([\w-]+)/.exec(block)?.[1]
    if (name && leg === 'server') found.set(name, reason ?? 'not scored')
  }
  return found
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

/** The proxy that adds the bearer token and the session name; resolves with its own base URL. */
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
      // Required of a 2026-07-28 request; a 2025 client may name its session too.
      'x-toolvisor-session': CONFORMANCE_SESSION,
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

/**
 * Each scenario's checks that did not pass (FAILURE or WARNING), from the checks the suite saved:
 * a check id the scenario repeats counts once, with its first message.
 */
function verdicts(results) {
  const found = new Map()
  for (const dir of readdirSync(results, { recursive: true })) {
    if (!String(dir).endsWith('checks.json')) continue
    const checks = JSON.parse(readFileSync(join(results, String(dir)), 'utf8'))
    const bad = new Map()
    for (const c of checks) {
      if (c.status !== 'FAILURE' && c.status !== 'WARNING') continue
      if (!bad.has(c.id)) bad.set(c.id, c.errorMessage ?? c.status)
    }
    const scenario = String(dir)
      .split('/')[0]
      .replace(/^server-/, '')
      .replace(/-\d{4}-\d{2}-\d{2}T.*$/, '')
    found.set(scenario, bad)
  }
  return found
}

/** Runs one era's suite against `url`; each scenario's verdict, and the suite's exit code and output. */
async function runEra(node, era, url, results) {
  const expected = join(here, era.expected)
  const entry = join(suiteOf(era), 'dist', 'index.js')
  const args = [entry, 'server', ...era.args, '--url', url, '--expected-failures', expected, '-o', results]
  const run = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  run.stdout.on('data', (chunk) => (output += chunk))
  run.stderr.on('data', (chunk) => (output += chunk))
  const code = await new Promise((resolve) => run.once('exit', resolve))
  return { code, output, found: verdicts(results), allowed: allowedIn(expected) }
}

/**
 * What an expected-failures file lists: per scenario, `true` (all of it: `- scenario`) or the set
 * of its checks that may fail (`- scenario:check-id`, one line each).
 */
function allowedIn(file) {
  const allowed = new Map()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const entry = /^\s*-\s*([\w-]+)(?::([\w-]+))?/.exec(line)
    if (!entry) continue
    const [, scenario, check] = entry
    if (check === undefined) allowed.set(scenario, true)
    else if (allowed.get(scenario) !== true)
      allowed.set(scenario, new Set([...(allowed.get(scenario) ?? []), check]))
  }
  return allowed
}

const described = (checks) => checks.map(([id, message]) => `${id}: ${message}`)

/** Prints an era's verdicts and its tally line; whether anything was unexpected. */
function report(era, { code, output, found, allowed }, suiteNode) {
  const unscored = notScored(era)
  const file = era.expected
  const counts = { passed: 0, failed: 0, excused: 0, unscored: 0 }
  process.stdout.write(`${era.era}, @modelcontextprotocol/conformance@${era.version}:\n`)
  for (const [scenario, bad] of [...found].sort(([a], [b]) => a.localeCompare(b))) {
    const listed = allowed.get(scenario)
    let verdict
    if (unscored.has(scenario) && listed === undefined) {
      // Run and shown, never counted: the requirement set itself does not score it.
      counts.unscored++
      const ids = [...bad.keys()].join(', ')
      verdict = `not scored (${unscored.get(scenario)}): ${bad.size === 0 ? 'pass' : `fails ${ids}`}`
    } else if (listed === true) {
      // A stale entry (it passes now) is a failure: the file is wrong.
      if (bad.size === 0) counts.failed++
      else counts.excused++
      verdict =
        bad.size === 0 ? `PASSES, but is listed as expected to fail (${file})` : `not applicable (${file})`
    } else if (listed !== undefined) {
      // Only the checks listed may fail, and each of them must: any other is a failure.
      const unexpected = described([...bad].filter(([id]) => !listed.has(id)))
      const stale = [...listed].filter((id) => !bad.has(id))
      if (unexpected.length > 0 || stale.length > 0) counts.failed++
      else counts.excused++
      verdict =
        unexpected.length > 0
          ? `FAIL: ${unexpected.join('; ')}`
          : stale.length > 0
            ? `${stale.join(', ')} PASS (or did not run), but listed as expected to fail (${file})`
            : `not applicable in part (${file}: ${[...listed].join(', ')}); its other checks pass`
    } else if (bad.size === 0) {
      counts.passed++
      verdict = 'pass'
    } else {
      counts.failed++
      verdict = `FAIL: ${described([...bad]).join('; ')}`
    }
    process.stdout.write(`  ${scenario}: ${verdict}\n`)
  }
  // A listed scenario that did not run is a stale entry too.
  for (const scenario of [...allowed.keys()].filter((s) => !found.has(s)).sort()) {
    counts.failed++
    process.stdout.write(`  ${scenario}: did not run, but is listed as expected to fail (${file})\n`)
  }
  if (found.size === 0 || (code !== 0 && counts.failed === 0)) {
    process.stdout.write(output)
    counts.failed = Math.max(counts.failed, 1)
  }
  const extra = counts.unscored > 0 ? `, ${counts.unscored} not scored` : ''
  process.stdout.write(
    `conformance ${era.version} ${era.era} (suite on Node ${suiteNode}, serve on ${process.version}): ${counts.passed} passed, ${counts.failed} failed, ${counts.excused} not applicable${extra}\n`,
  )
  return counts.failed > 0
}

const node = ownMajor >= 22 ? process.execPath : nodeFor(22)
for (const era of ERAS) ensureSuite(node, era)
const suiteNode = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim()
const state = mkdtempSync(join(tmpdir(), 'tv-conformance-'))
const serve = await startServe(state)
const { proxy, url } = await authProxy(serve.url, serve.token)
const runs = []
for (const era of ERAS) runs.push(await runEra(node, era, url, join(state, `results-${era.era}`)))
proxy.close()
serve.child.kill('SIGTERM')
await new Promise((resolve) => serve.child.once('exit', resolve))

let unexpected = false
for (const [i, era] of ERAS.entries()) unexpected = report(era, runs[i], suiteNode) || unexpected
if (!process.argv.includes('--keep')) rmSync(state, { recursive: true, force: true })
else process.stdout.write(`results kept in ${state}\n`)
process.exit(unexpected ? 1 : 0)
