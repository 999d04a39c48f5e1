// Builds native/landlock-launcher.c into dist/native/landlock-launcher (or the directory given as
// the first argument) with the system compiler, through process-runtime's shared native build:
// when it cannot be built, dist/native/UNAVAILABLE records why and the mechanism reports itself
// unavailable with that reason at run time.
import { spawnSync } from 'node:child_process'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { compileNative } from '@toolvisor/process-runtime/native-build'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist', 'native')
let abi = ''
const built = compileNative({
  pkg: '@toolvisor/sandbox-landlock',
  name: 'landlock-launcher',
  source: join(root, 'native', 'landlock-launcher.c'),
  outDir,
  check(binary) {
    // The binary must run here: a cross compiler or a broken toolchain would otherwise go unnoticed.
    const probe = spawnSync(binary, ['--abi'], { encoding: 'utf8' })
    if (probe.error) return probe.error.message
    if (probe.status !== 0 || !/^\d+\n$/.test(probe.stdout))
      return `exit ${probe.status}: ${probe.stderr.trim()}`
    abi = probe.stdout.trim()
    return undefined
  },
})
if (built) {
  const binary = join(outDir, 'landlock-launcher')
  const shown = relative(process.cwd(), binary)
  process.stdout.write(
    `@toolvisor/sandbox-landlock: built ${shown.startsWith('..') ? binary : shown} (Landlock ABI ${abi} here)\n`,
  )
}
