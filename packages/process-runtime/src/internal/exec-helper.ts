import { accessSync, constants, readFileSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LaunchFacts } from '../types.js'

/**
 * `toolvisor-exec`, the final exec into every tool, as this package's build compiled it
 * (`dist/native/`, from `src/` and from `dist/` alike).
 */
export const builtExecHelper = fileURLToPath(new URL('../../dist/native/toolvisor-exec', import.meta.url))

const rebuild = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/process-runtime'

/** Whether the helper at `path` can run, and if not why (the build's `UNAVAILABLE` record, when there is one). */
export function execHelperStatus(path: string): LaunchFacts['execHelper'] {
  const missing = nativeProblem(path)
  // Its real path: every launch refers to it by a descriptor opened without following any symlink.
  if (missing === undefined) return { available: true, path: realpathSync(path) }
  return { available: false, path, reason: `toolvisor-exec is missing: ${missing.reason}`, fix: missing.fix }
}

/**
 * Why a program a package's native build compiled at `path` cannot run (the `UNAVAILABLE` record
 * its build left beside it, see `native-build`), or undefined when it can.
 */
export function nativeProblem(path: string): { readonly reason: string; readonly fix: string } | undefined {
  try {
    accessSync(path, constants.X_OK)
    return undefined
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
    return { reason, fix }
  }
}
