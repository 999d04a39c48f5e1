import { accessSync, constants, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LaunchFacts } from './types.js'

/**
 * `toolvisor-exec`, the final exec into every tool, as this package's build compiled it
 * (`dist/native/`, from `src/` and from `dist/` alike).
 */
export const builtExecHelper = fileURLToPath(new URL('../dist/native/toolvisor-exec', import.meta.url))

const rebuild = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/process-runtime'

/** Whether the helper at `path` can run, and if not why (the build's `UNAVAILABLE` record, when there is one). */
export function execHelperStatus(path: string): LaunchFacts['execHelper'] {
  try {
    accessSync(path, constants.X_OK)
    return { available: true, path }
  } catch {
    let reason = `${path} does not exist or is not executable`
    let fix = rebuild
    try {
      const text = readFileSync(join(dirname(path), 'UNAVAILABLE'), 'utf8')
      reason = text.match(/^reason: (.*)$/m)?.[1]?.trim() ?? reason
      fix = text.match(/^fix: (.*)$/m)?.[1]?.trim() ?? fix
    } catch {
      // no record: the build never ran here
    }
    return { available: false, path, reason: `toolvisor-exec is missing: ${reason}`, fix }
  }
}

/**
 * `toolvisor-spawnd`, the fork server, as this package's build compiled it (beside
 * `toolvisor-exec`, in its own directory: its own `UNAVAILABLE` record when it could not be built).
 */
export const builtForkServer = fileURLToPath(
  new URL('../dist/native/fork-server/toolvisor-spawnd', import.meta.url),
)

/** Whether launches can go through the fork server at `binary` (`false`: turned off), and if not why. */
export function forkServerStatus(binary: string | false): LaunchFacts['forkServer'] {
  if (binary === false) {
    const how =
      process.env.TOOLVISOR_FORK_SERVER === 'off' ? 'TOOLVISOR_FORK_SERVER=off' : 'forkServer: false'
    return { available: false, reason: `turned off (${how})` }
  }
  try {
    accessSync(binary, constants.X_OK)
    return { available: true, path: binary }
  } catch {
    let reason = `${binary} does not exist or is not executable`
    try {
      const text = readFileSync(join(dirname(binary), 'UNAVAILABLE'), 'utf8')
      reason = text.match(/^reason: (.*)$/m)?.[1]?.trim() ?? reason
    } catch {
      // no record: the build never ran here
    }
    return { available: false, reason: `toolvisor-spawnd is missing: ${reason}` }
  }
}
