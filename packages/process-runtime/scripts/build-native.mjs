// Builds native/toolvisor-exec.c into dist/native/toolvisor-exec (or the directory given as the
// first argument), and native/toolvisor-spawnd.c, the fork server, into fork-server/ beside it
// (its own directory: its own UNAVAILABLE record). See native.mjs for what happens when one cannot
// be built; without the fork server, launches are spawned from Node itself.
import { spawnSync } from 'node:child_process'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileNative } from './native.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist', 'native')
const built = compileNative({
  pkg: '@toolvisor/process-runtime',
  name: 'toolvisor-exec',
  source: join(root, 'native', 'toolvisor-exec.c'),
  outDir,
  static: true,
  freestanding: true,
  check(binary) {
    const run = spawnSync(binary, ['--', '/bin/sh', '-c', 'echo ok'], { encoding: 'utf8' })
    if (run.error) return run.error.message
    return run.status === 0 && run.stdout === 'ok\n' ? undefined : `exit ${run.status}: ${run.stderr.trim()}`
  },
})
if (built) {
  const shown = relative(process.cwd(), join(outDir, 'toolvisor-exec'))
  process.stdout.write(
    `@toolvisor/process-runtime: built ${shown.startsWith('..') ? join(outDir, 'toolvisor-exec') : shown}\n`,
  )
}

// The fork server runs only under Node's IPC channel: run bare, it must refuse, saying why.
const forkDir = join(outDir, 'fork-server')
const server = compileNative({
  pkg: '@toolvisor/process-runtime',
  name: 'toolvisor-spawnd',
  source: join(root, 'native', 'toolvisor-spawnd.c'),
  outDir: forkDir,
  check(binary) {
    const run = spawnSync(binary, [], { encoding: 'utf8', env: {} })
    if (run.error) return run.error.message
    return run.status === 2 && run.stderr.includes('NODE_CHANNEL_FD')
      ? undefined
      : `exit ${run.status}: ${run.stderr.trim()}`
  },
})
if (server) {
  const shown = relative(process.cwd(), join(forkDir, 'toolvisor-spawnd'))
  process.stdout.write(
    `@toolvisor/process-runtime: built ${shown.startsWith('..') ? join(forkDir, 'toolvisor-spawnd') : shown}\n`,
  )
}
