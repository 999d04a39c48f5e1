// Builds native/landlock-launcher.c into dist/native/landlock-launcher with the system compiler
// (`$CC`, else `cc`). The package build never fails because of it: when the compiler is missing or
// refuses the source, dist/native/UNAVAILABLE records the reason and the fix, a warning is printed,
// and the mechanism reports itself unavailable with that reason at run time.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const source = join(root, 'native', 'landlock-launcher.c')
// An output directory may be given (the tests build into a temporary one); default dist/native.
const outDir = process.argv[2] ? resolve(process.argv[2]) : join(root, 'dist', 'native')
const binary = join(outDir, 'landlock-launcher')
const marker = join(outDir, 'UNAVAILABLE')
const fix = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/sandbox-landlock'

mkdirSync(outDir, { recursive: true })

function unavailable(reason, details = '', what = fix) {
  rmSync(binary, { force: true })
  const text = `reason: ${reason}\nfix: ${what}\n${details ? `\n${details.trim()}\n` : ''}`
  writeFileSync(marker, text)
  process.stderr.write(
    `warning: @toolvisor/sandbox-landlock: the Landlock launcher was not built: ${reason}\n` +
      `  fix: ${what}\n  the landlock sandbox mechanism will report itself unavailable until then\n`,
  )
  process.exit(0)
}

if (process.platform !== 'linux') {
  unavailable(`Landlock is Linux-only; this is ${process.platform}`, '', 'use another sandbox mechanism here')
}

const cc = process.env.CC?.trim() || 'cc'
const temporary = `${binary}.${process.pid}.tmp`
// -Werror is left out on purpose: a newer compiler's new warning must not make the sandbox vanish.
// The package's tests compile the source with -Werror.
const args = ['-std=gnu99', '-O2', '-Wall', '-Wextra', '-o', temporary, source]
const compiled = spawnSync(cc, args, { encoding: 'utf8' })
if (compiled.error) {
  const reason =
    compiled.error.code === 'ENOENT'
      ? `no C compiler: "${cc}" was not found`
      : `the C compiler "${cc}" could not be run: ${compiled.error.message}`
  unavailable(reason)
}
if (compiled.status !== 0) {
  rmSync(temporary, { force: true })
  const firstError =
    compiled.stderr.split('\n').find((line) => /error/i.test(line)) ?? `exit status ${compiled.status}`
  unavailable(
    `"${cc}" failed to compile native/landlock-launcher.c: ${firstError.trim()}`,
    compiled.stderr,
    `use a working C compiler (apt-get install gcc, or set CC; its output is in ${marker}) and rebuild @toolvisor/sandbox-landlock`,
  )
}
if (compiled.stderr.trim() !== '') process.stderr.write(compiled.stderr)
chmodSync(temporary, 0o755)

// The binary must run here: a cross compiler or a broken toolchain would otherwise go unnoticed.
const probe = spawnSync(temporary, ['--abi'], { encoding: 'utf8' })
if (probe.error || probe.status !== 0 || !/^\d+\n$/.test(probe.stdout)) {
  rmSync(temporary, { force: true })
  const why = probe.error ? probe.error.message : `exit ${probe.status}: ${probe.stderr.trim()}`
  unavailable(
    `the compiled launcher does not run here (${why})`,
    '',
    `use a C compiler that targets this machine (unset CC or set it) and rebuild @toolvisor/sandbox-landlock`,
  )
}

renameSync(temporary, binary)
rmSync(marker, { force: true })
const shown = relative(process.cwd(), binary).startsWith('..') ? binary : relative(process.cwd(), binary)
process.stdout.write(
  `@toolvisor/sandbox-landlock: built ${shown} (Landlock ABI ${probe.stdout.trim()} here)\n`,
)
