import { execFile, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The launcher the package build compiles. Resolved from this module, two levels below the package
 * root both as source (`src/internal/`) and as built code (`dist/internal/`), so it points at
 * `dist/native/landlock-launcher` either way.
 */
export const builtLauncher = fileURLToPath(new URL('../../dist/native/landlock-launcher', import.meta.url))

/**
 * Whether the launcher can give each run a pid namespace of its own here (with its mount and IPC
 * namespaces, and a user namespace when toolvisor is not root), and why not: found by making one.
 */
export type PidNamespace = { readonly available: true } | { readonly available: false; readonly why: string }

/** What running `launcher --features` found. */
export type LauncherStatus =
  | {
      readonly available: true
      readonly launcher: string
      readonly abi: number
      readonly pidNamespace: PidNamespace
    }
  | { readonly available: false; readonly launcher: string; readonly reason: string; readonly fix: string }

const rebuild =
  'rebuild @toolvisor/sandbox-landlock (its build compiles the launcher with the system C compiler)'
const kernelFix =
  'run on Linux >= 5.13 with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= boot parameter)'

/** Reads `UNAVAILABLE` beside the launcher: the build's record of why it could not compile it. */
function buildFailure(launcher: string): { reason: string; fix: string } | undefined {
  let text: string
  try {
    text = readFileSync(join(dirname(launcher), 'UNAVAILABLE'), 'utf8')
  } catch {
    return undefined
  }
  const field = (name: string) => text.match(new RegExp(`^${name}: (.*)$`, 'm'))?.[1]?.trim()
  return {
    reason: `the Landlock launcher was not built: ${field('reason') ?? text.trim()}`,
    fix: field('fix') ?? rebuild,
  }
}

/** What running `launcher --features` gave: a spawn error (ENOENT, EACCES), or an exit status and output. */
export interface FeaturesOutcome {
  readonly spawnError?: { readonly code?: string | undefined; readonly message: string } | undefined
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Turns what `--features` did into a status. Its answer is one `name value` line per feature:
 * `abi N`, then `pid-ns yes` or `pid-ns no: <why>`.
 */
export function interpretFeatures(launcher: string, outcome: FeaturesOutcome): LauncherStatus {
  const { spawnError, status, stdout, stderr } = outcome
  if (spawnError?.code === 'ENOENT') {
    const failure = buildFailure(launcher)
    if (failure !== undefined) return { available: false, launcher, ...failure }
    const fix =
      launcher === builtLauncher
        ? rebuild
        : 'build it there, or leave the launcher option out to use the built one'
    return { available: false, launcher, reason: `the Landlock launcher ${launcher} does not exist`, fix }
  }
  if (spawnError !== undefined || status !== 0) {
    const detail =
      stderr.trim() ||
      spawnError?.message ||
      (status === null ? 'killed before it answered' : `exit status ${status}`)
    return {
      available: false,
      launcher,
      reason: `the Landlock launcher ${launcher} did not run: ${detail}`,
      fix: spawnError?.code === 'EACCES' ? `make ${launcher} executable, or ${rebuild}` : rebuild,
    }
  }
  const answer = /^abi (\d+)\npid-ns (yes|no: (.+))\n$/.exec(stdout)
  const abi = answer?.[1]
  if (answer === null || abi === undefined) {
    return {
      available: false,
      launcher,
      reason: `the Landlock launcher ${launcher} answered "${stdout.trim()}" to --features instead of "abi N" and "pid-ns yes|no: why"`,
      fix: rebuild,
    }
  }
  if (Number(abi) === 0) {
    const why = stderr.replace(/^toolvisor-landlock: Landlock: /, '').trim() || 'the kernel does not offer it'
    return { available: false, launcher, reason: `Landlock is not available: ${why}`, fix: kernelFix }
  }
  const pidNamespace: PidNamespace =
    answer[2] === 'yes' ? { available: true } : { available: false, why: answer[3] ?? 'unknown' }
  return { available: true, launcher, abi: Number(abi), pidNamespace }
}

const probeTimeoutMs = 10_000

/** Runs `launcher --features`. */
export function probeLauncher(launcher: string): Promise<LauncherStatus> {
  return new Promise((resolve) => {
    execFile(
      launcher,
      ['--features'],
      { encoding: 'utf8', timeout: probeTimeoutMs },
      (error, stdout, stderr) => {
        const code = error?.code
        const spawnError = typeof code === 'string' ? { code, message: error?.message ?? code } : undefined
        const status = error === null ? 0 : typeof code === 'number' ? code : null
        resolve(interpretFeatures(launcher, { spawnError, status, stdout, stderr }))
      },
    )
  })
}

/** Runs `launcher --features` synchronously (for `wrap`, which is synchronous, when `qualify` never ran). */
export function probeLauncherSync(launcher: string): LauncherStatus {
  const run = spawnSync(launcher, ['--features'], { encoding: 'utf8', timeout: probeTimeoutMs })
  const error = run.error as NodeJS.ErrnoException | undefined
  const spawnError = error === undefined ? undefined : { code: error.code, message: error.message }
  return interpretFeatures(launcher, {
    spawnError,
    status: run.status,
    stdout: run.stdout ?? '',
    stderr: run.stderr ?? '',
  })
}
