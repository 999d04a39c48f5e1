#!/usr/bin/env node
// `node scripts/packaging.mjs`: the packaging check of every package (issue 29 point 4), since
// `install-cli` packs tarballs and a publish uploads them. publint checks what a pack holds against
// package.json (exports, files, types); attw checks that each export's types resolve as its
// JavaScript does, for ESM consumers (every package is ESM only: node16 from ESM, and bundlers);
// and each tarball must carry the licence text.
// Prints one line per package and exits non-zero when any has a problem.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = (name) => join(root, 'node_modules', '.bin', name)
const packages = readdirSync(join(root, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => join(root, 'packages', entry.name))
  .filter((dir) => !JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).private)

const checks = [
  ['publint', ['--pack', 'pnpm', '--strict']],
  ['attw', ['--pack', '.', '--profile', 'esm-only', '--format', 'ascii']],
]
/**
 * Every tarball carries the licence text: pnpm copies the workspace's LICENSE into a package that
 * has none of its own, and this says so when it did not (a pnpm that stopped doing it, a `files`
 * list that keeps it out).
 */
function licenceProblem(dir) {
  const run = spawnSync('pnpm', ['pack', '--dry-run', '--json'], { cwd: dir, encoding: 'utf8' })
  if (run.status !== 0) return `pnpm pack --dry-run:\n${`${run.stdout}${run.stderr}`.trim()}`
  const files = JSON.parse(run.stdout).files.map((file) => file.path)
  return files.includes('LICENSE') ? undefined : 'licence: the tarball has no LICENSE'
}

let failed = 0
for (const dir of packages) {
  const name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name
  const problems = []
  for (const [tool, args] of checks) {
    const run = spawnSync(bin(tool), args, { cwd: dir, encoding: 'utf8' })
    if (run.status !== 0) problems.push(`${tool}:\n${`${run.stdout}${run.stderr}`.trim()}`)
  }
  const licence = licenceProblem(dir)
  if (licence) problems.push(licence)
  if (problems.length > 0) failed++
  process.stdout.write(problems.length === 0 ? `ok ${name}\n` : `PROBLEM ${name}\n${problems.join('\n')}\n`)
}
process.stdout.write(
  `packaging: ${packages.length - failed} of ${packages.length} packages without a problem\n`,
)
process.exit(failed > 0 ? 1 : 0)
