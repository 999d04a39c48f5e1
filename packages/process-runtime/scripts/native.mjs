// Builds a small C program of a toolvisor package with the system compiler (`$CC`, else `cc`),
// shared by @toolvisor/process-runtime (toolvisor-exec), @toolvisor/launch-native (toolvisor-spawnd) and @toolvisor/sandbox-landlock (its
// launcher). A package build never fails because of it: when the compiler is missing, refuses the
// source or builds something that does not run here, `UNAVAILABLE` beside the binary records the
// reason and the fix, a warning is printed, and the package reports the program unavailable with
// that reason at run time.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/** A build without the C library: no start-up code, no stack protector (it needs the C library's TLS). */
export const FREESTANDING = [
  '-DTOOLVISOR_FREESTANDING',
  '-static',
  '-nostdlib',
  '-fno-pie',
  '-no-pie',
  '-fno-stack-protector',
  '-fno-builtin',
  '-fno-tree-loop-distribute-patterns',
  '-U_FORTIFY_SOURCE',
]

const FIX = (pkg) => `install a C compiler (apt-get install gcc) and rebuild ${pkg}`

/**
 * Compiles `source` into `outDir/name`. `check(binary)` runs the result and returns `undefined`
 * when it works here, else why not. `static: true` tries a static link first (a faster exec),
 * falling back to a dynamic one; `freestanding: true` tries before that a build without the C
 * library (`-DTOOLVISOR_FREESTANDING -nostdlib`: the source brings its own start and system calls),
 * whose exec is cheaper still. Returns true when the binary was built.
 */
export function compileNative({
  pkg,
  name,
  source,
  outDir,
  check,
  static: tryStatic = false,
  freestanding = false,
}) {
  const binary = join(outDir, name)
  const marker = join(outDir, 'UNAVAILABLE')
  mkdirSync(outDir, { recursive: true })
  const unavailable = (reason, details = '', fix = FIX(pkg)) => {
    rmSync(binary, { force: true })
    writeFileSync(marker, `reason: ${reason}\nfix: ${fix}\n${details ? `\n${details.trim()}\n` : ''}`)
    process.stderr.write(
      `warning: ${pkg}: ${name} was not built: ${reason}\n  fix: ${fix}\n  ${pkg} reports it unavailable until then\n`,
    )
    return false
  }
  if (process.platform !== 'linux') {
    return unavailable(`${name} is Linux-only; this is ${process.platform}`, '', 'use Linux')
  }
  const cc = process.env.CC?.trim() || 'cc'
  const temporary = `${binary}.${process.pid}.tmp`
  // -Werror is left out on purpose: a newer compiler's new warning must not make the program
  // vanish. The packages' tests compile the sources with -Werror.
  const base = ['-std=gnu99', '-O2', '-Wall', '-Wextra', '-o', temporary, source]
  // Each faster build is kept only when it compiles and runs here; the last, plain one always runs.
  const faster = [...(freestanding ? [FREESTANDING] : []), ...(tryStatic ? [['-static']] : [])]
  let compiled
  for (const flags of faster) {
    compiled = spawnSync(cc, [...flags, ...base], { encoding: 'utf8' })
    if (!compiled.error && compiled.status === 0 && check(temporary) === undefined) break
    compiled = undefined
  }
  compiled ??= spawnSync(cc, base, { encoding: 'utf8' })
  if (compiled.error) {
    return unavailable(
      compiled.error.code === 'ENOENT'
        ? `no C compiler: "${cc}" was not found`
        : `the C compiler "${cc}" could not be run: ${compiled.error.message}`,
    )
  }
  if (compiled.status !== 0) {
    rmSync(temporary, { force: true })
    const first =
      compiled.stderr.split('\n').find((line) => /error/i.test(line)) ?? `exit status ${compiled.status}`
    return unavailable(
      `"${cc}" failed to compile ${relative(process.cwd(), source)}: ${first.trim()}`,
      compiled.stderr,
      `use a working C compiler (apt-get install gcc, or set CC; its output is in ${marker}) and rebuild ${pkg}`,
    )
  }
  if (compiled.stderr.trim() !== '') process.stderr.write(compiled.stderr)
  chmodSync(temporary, 0o755)
  const broken = check(temporary)
  if (broken !== undefined) {
    rmSync(temporary, { force: true })
    return unavailable(
      `the compiled ${name} does not run here (${broken})`,
      '',
      `use a C compiler that targets this machine (unset CC or set it) and rebuild ${pkg}`,
    )
  }
  renameSync(temporary, binary)
  rmSync(marker, { force: true })
  return true
}
