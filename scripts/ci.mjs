#!/usr/bin/env node
// What `.ci/run` runs after the system packages: the whole test suite (`npm test`) on every Node
// of CI_MAJORS, then the MCP conformance suite against `toolvisor serve`, then lint and typecheck
// (`scripts/setup.mjs checks`: each a count in the tally), then the release path through a local
// registry (`scripts/registry.mjs`: every package published to Verdaccio, then npx and npm i -g
// from an empty folder). The first run installs
// and builds; the others reuse that build (turbo's cache: the build does not depend on the Node
// that runs it, and the one native part, the Landlock launcher, is built with cc). Each other Node
// is put first on PATH, so pnpm, turbo, vitest and every process the tests start run on it.
// Prints each run's tally, then, as the very last line, the sum of them all:
// `N passed, N failed[, N skipped]` (every package on every Node, plus the conformance scenarios of
// both MCP eras: the conformance run prints one tally per era, and each is counted).
import { spawn } from 'node:child_process'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CI_MAJORS, nodeFor, ownMajor, sharedBinary } from './node-versions.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const TALLY = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?/

/**
 * Runs `node script args` with `binary`'s folder first on PATH, echoing its output; its last tally
 * line, and every conformance tally line (`conformance VERSION ERA (...): N passed, ...`) by label.
 */
function run(binary, script, args = []) {
  const env = { ...process.env, PATH: `${dirname(binary)}${delimiter}${process.env.PATH ?? ''}` }
  return new Promise((resolve) => {
    const child = spawn(binary, [join(root, script), ...args], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let tally
    const failures = []
    const eras = []
    let rest = ''
    const read = (line) => {
      const found = tallyOf(line)
      tally = found ?? tally
      const era = /^conformance (\S+ \S+) /.exec(line)?.[1]
      if (found && era) eras.push({ label: era, tally: found })
      if (line.startsWith('failed: ')) failures.push(line.slice('failed: '.length))
    }
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      const lines = (rest + chunk).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) read(line)
    })
    child.once('exit', (code) => {
      read(rest)
      resolve({ code, tally, failures, eras })
    })
  })
}

function tallyOf(line) {
  const found = TALLY.exec(line.replace(/^conformance .*?: /, ''))
  return found ? { passed: +found[1], failed: +found[2], skipped: +(found[3] ?? 0) } : undefined
}

const show = ({ passed, failed, skipped }) =>
  `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`

const runs = []
const started = Date.now()
// This Node first: it installs and builds; then the conformance suite, which needs that build.
const order = [ownMajor, ...CI_MAJORS.filter((major) => major !== ownMajor)]
for (const [i, major] of order.entries()) {
  const { binary, remove } = sharedBinary(nodeFor(major))
  process.stdout.write(`\nci: the whole suite on Node ${major} (${binary})\n`)
  const { code, tally, failures } = await run(binary, 'scripts/setup.mjs', ['test'])
  remove()
  runs.push({ what: `Node ${major}`, code, tally, failures })
  if (i === 0) {
    process.stdout.write('\nci: the MCP conformance suite against toolvisor serve\n')
    const conformance = await run(process.execPath, 'scripts/conformance/run.mjs')
    // One tally per era, each a run of its own. A failed exit that no tally counts is one failure,
    // on the last era; no tally at all: one failure, as for any run.
    const eras = conformance.eras.length > 0 ? conformance.eras : [{ label: '', tally: undefined }]
    const counted = eras.reduce((sum, { tally }) => sum + (tally?.failed ?? 1), 0)
    for (const [j, { label, tally }] of eras.entries()) {
      const code = j === eras.length - 1 && counted === 0 ? conformance.code : 0
      runs.push({ what: `conformance ${label}`.trim(), code, tally, failures: [] })
    }
    process.stdout.write('\nci: lint and typecheck (scripts/setup.mjs checks)\n')
    const checks = await run(process.execPath, 'scripts/setup.mjs', ['checks'])
    runs.push({ what: 'checks', code: checks.code, tally: checks.tally, failures: checks.failures })
    process.stdout.write('\nci: the release path through a local registry (scripts/registry.mjs)\n')
    const registry = await run(process.execPath, 'scripts/registry.mjs')
    runs.push({ what: 'registry', code: registry.code, tally: registry.tally, failures: registry.failures })
  }
}

process.stdout.write(`\nci: ${Math.round((Date.now() - started) / 1000)} s\n`)
const total = { passed: 0, failed: 0, skipped: 0 }
// The failed tests of every run, named again at the end: a long log is often seen by its tail only.
for (const { what, failures } of runs) {
  for (const name of failures) process.stdout.write(`ci: ${what}: failed: ${name}\n`)
}
for (const { what, code, tally } of runs) {
  // A run that printed no tally, or failed without counting a failure, counts as one failure.
  const counted = tally ?? { passed: 0, failed: 1, skipped: 0 }
  if (code !== 0 && counted.failed === 0) counted.failed = 1
  process.stdout.write(`ci: ${what}: ${show(counted)}${tally ? '' : ' (it printed no tally)'}\n`)
  total.passed += counted.passed
  total.failed += counted.failed
  total.skipped += counted.skipped
}
process.stdout.write(`${show(total)}\n`)
process.exit(total.failed > 0 ? 1 : 0)
