// Builds native/toolvisor-exec.c into dist/native/toolvisor-exec (or the directory given as the
// first argument). See native.mjs for what happens when it cannot be built. The fork server is
// @toolvisor/launch-native's.
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
