#!/usr/bin/env node
// `node scripts/registry.mjs`: the release path, tried as a user meets it (issue 35 point 2). Every
// package is published, as `pnpm publish` uploads it, to a local registry (Verdaccio, installed
// once into .tools/verdaccio from the npm registry, listening on loopback, everything else proxied
// to the npm registry); then, from an empty folder that sees only that registry and no workspace:
// `npx -y @toolvisor/cli` answers `--version`, serves the examples to a real MCP client over stdio
// (`mcp --toolbox`), and `npm i -g` puts a `toolvisor` that runs. Each step is one check; the last
// line is the tally `N passed, N failed`. Needs the build (`npm test` or scripts/setup.mjs setup).
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const VERDACCIO = '6.8.0'
const work = mkdtempSync(join(tmpdir(), 'toolvisor-registry-'))
const examples = join(root, 'examples', 'tools')
const version = JSON.parse(readFileSync(join(root, 'packages', 'cli', 'package.json'), 'utf8')).version
let passed = 0
let failed = 0

/** Runs one check: passed, or failed with what it printed. */
async function check(what, body) {
  try {
    await body()
    passed++
    process.stdout.write(`ok: ${what}\n`)
  } catch (error) {
    failed++
    process.stdout.write(`failed: ${what}\n${error instanceof Error ? error.message : String(error)}\n`)
  }
}

/** A command that must succeed; its stdout. */
function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')}: exit ${result.status ?? result.signal}\n${result.stdout}${result.stderr}`,
    )
  return result.stdout
}

async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Verdaccio, installed once beside the other tools CI fetches. */
function verdaccioBin() {
  const dir = join(root, '.tools', 'verdaccio')
  const bin = join(dir, 'node_modules', '.bin', 'verdaccio')
  if (!existsSync(bin)) {
    process.stderr.write(`registry: installing verdaccio@${VERDACCIO} into .tools/verdaccio (once)\n`)
    mkdirSync(dir, { recursive: true })
    sh('npm', [
      'install',
      '--prefix',
      dir,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `verdaccio@${VERDACCIO}`,
    ])
  }
  return bin
}

/** Starts Verdaccio on loopback: @toolvisor/* only from what is published to it, the rest proxied. */
async function startRegistry() {
  const port = await freePort()
  const config = join(work, 'verdaccio.yaml')
  writeFileSync(
    config,
    [
      `storage: ${join(work, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(work, 'htpasswd')}`,
      'uplinks:',
      '  npmjs:',
      '    url: https://registry.npmjs.org/',
      'packages:',
      "  '@toolvisor/*':",
      '    access: $all',
      '    publish: $all',
      "  '**':",
      '    access: $all',
      '    proxy: npmjs',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  )
  const server = spawn(verdaccioBin(), ['--config', config, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let said = ''
  server.stdout.on('data', (chunk) => (said += chunk))
  server.stderr.on('data', (chunk) => (said += chunk))
  const url = `http://127.0.0.1:${port}/`
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`${url}-/ping`).then(
      (r) => r.ok,
      () => false,
    )
    if (up) return { url, server }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  server.kill('SIGKILL')
  throw new Error(`verdaccio did not answer on ${url}:\n${said}`)
}

/** The environment of a user who sees only this registry, in an empty folder (no workspace). */
function userEnv(registry, home) {
  const npmrc = join(home, '.npmrc')
  const host = registry.replace(/^http:/, '')
  writeFileSync(npmrc, `registry=${registry}\n${host}:_authToken=local-test\n`)
  return {
    ...process.env,
    HOME: home,
    npm_config_userconfig: npmrc,
    npm_config_registry: registry,
    npm_config_cache: join(home, '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  }
}

/** An MCP client (the SDK's) on `command args` over stdio: the tools it lists. */
async function listedTools(command, args, env, cwd) {
  const sdk = join(root, 'packages', 'cli', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm')
  const { Client } = await import(join(sdk, 'client', 'index.js'))
  const { StdioClientTransport } = await import(join(sdk, 'client', 'stdio.js'))
  const client = new Client({ name: 'registry-check', version: '0' })
  await client.connect(new StdioClientTransport({ command, args, env, cwd, stderr: 'pipe' }))
  try {
    return (await client.listTools()).tools.map((tool) => tool.name).sort()
  } finally {
    await client.close()
  }
}

const { url, server } = await startRegistry()
const home = join(work, 'home')
mkdirSync(home)
const env = userEnv(url, home)
const empty = join(work, 'empty folder')
mkdirSync(empty)
try {
  await check(
    'every package publishes to the local registry (pnpm publish: workspace ranges become versions)',
    () => {
      const pnpm = join(root, '.tools', 'pnpm', 'node_modules', '.bin', 'pnpm')
      sh(
        existsSync(pnpm) ? pnpm : 'pnpm',
        ['-r', 'publish', '--registry', url, '--no-git-checks', '--access', 'public'],
        {
          cwd: root,
          env,
        },
      )
      const published = readdirSync(join(work, 'storage', '@toolvisor'))
      const expected = readdirSync(join(root, 'packages')).filter(
        (name) => !JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')).private,
      )
      if (published.length !== expected.length)
        throw new Error(
          `published ${published.length} packages, expected ${expected.length}: ${published.join(', ')}`,
        )
    },
  )
  await check(`npx -y @toolvisor/cli --version, from an empty folder: ${version}`, () => {
    const out = sh('npx', ['-y', `@toolvisor/cli@${version}`, '--version'], { cwd: empty, env }).trim()
    if (out !== version) throw new Error(`printed ${JSON.stringify(out)}`)
  })
  await check('npx -y @toolvisor/cli mcp --toolbox DIR serves the examples to an MCP client', async () => {
    const names = await listedTools(
      'npx',
      ['-y', `@toolvisor/cli@${version}`, 'mcp', '--toolbox', examples],
      env,
      empty,
    )
    for (const name of ['counter', 'log_watcher', 'log_watcher__send', 'processes', 'word_count'])
      if (!names.includes(name)) throw new Error(`${name} not listed: ${names.join(', ')}`)
  })
  await check('npm i -g @toolvisor/cli puts a toolvisor that runs, its package carrying the licence', () => {
    const prefix = join(work, 'global')
    sh('npm', ['install', '-g', '--prefix', prefix, `@toolvisor/cli@${version}`], { cwd: empty, env })
    const bin = join(prefix, 'bin', 'toolvisor')
    const described = sh(bin, ['describe', join(examples, 'counter')], { cwd: empty, env })
    if (!described.includes('(v2 stream, jsonl events, check)'))
      throw new Error(`describe printed:\n${described}`)
    const licence = join(prefix, 'lib', 'node_modules', '@toolvisor', 'cli', 'LICENSE')
    if (!readFileSync(licence, 'utf8').startsWith('MIT License'))
      throw new Error(`${licence} is not the MIT licence`)
  })
} finally {
  server.kill('SIGTERM')
  rmSync(work, { recursive: true, force: true })
}
process.stdout.write(`${passed} passed, ${failed} failed\n`)
process.exit(failed > 0 ? 1 : 0)
