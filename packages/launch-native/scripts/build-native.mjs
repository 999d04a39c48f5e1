// Builds native/toolvisor-spawnd.c, the fork server, into dist/native/fork-server/ (or the
// directory given as the first argument). See @toolvisor/process-runtime's native.mjs for what
// happens when it cannot be built: `UNAVAILABLE` records why, and launches are spawned from Node.
import { spawnSync } from 'node:child_process'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileNative } from '@toolvisor/process-runtime/native-build'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const forkDir = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist', 'native', 'fork-server')
// The fork server runs only under Node's IPC channel: run bare, it must refuse, saying why.
const server = compileNative({
  pkg: '@toolvisor/launch-native',
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
    `@toolvisor/launch-native: built ${shown.startsWith('..') ? join(forkDir, 'toolvisor-spawnd') : shown}\n`,
  )
}
