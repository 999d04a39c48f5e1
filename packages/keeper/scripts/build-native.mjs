// Builds native/toolvisor-keeper.c into dist/native/toolvisor-keeper (or the directory given as the
// first argument) with the system compiler, through process-runtime's shared native build: when it
// cannot be built, dist/native/UNAVAILABLE records why and the package reports keeping
// processes unavailable with that reason at run time.
import { spawnSync } from 'node:child_process'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileNative } from '@toolvisor/process-runtime/native-build'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist', 'native')
const built = compileNative({
  pkg: '@toolvisor/keeper',
  name: 'toolvisor-keeper',
  source: join(root, 'native', 'toolvisor-keeper.c'),
  outDir,
  // Static: one exec less work per launch (no dynamic loader); it falls back to a dynamic link.
  static: true,
  check(binary) {
    // The binary must run here: a cross compiler or a broken toolchain would otherwise go unnoticed.
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' })
    if (probe.error) return probe.error.message
    if (probe.status !== 0 || !/^toolvisor-keeper \d+\n$/.test(probe.stdout))
      return `exit ${probe.status}: ${probe.stderr.trim()}`
    return undefined
  },
})
if (built) {
  const binary = join(outDir, 'toolvisor-keeper')
  const shown = relative(process.cwd(), binary)
  process.stdout.write(`@toolvisor/keeper: built ${shown.startsWith('..') ? binary : shown}\n`)
}
