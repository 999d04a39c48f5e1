import { accessSync, constants, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'

/**
 * Pins the bwrap binary to an absolute path, searched on the runtime's own PATH. Left as a bare
 * name, it would be looked up on the PATH of the launch's environment, which the tool's declared
 * environment shapes: a tool could then pick the "bwrap" that starts it. Whether the binary works
 * is never decided here: qualify runs it.
 */
export function locate(name: string, pathEnv: string | undefined = process.env.PATH): string {
  if (name.includes('/')) return resolve(name)
  for (const dir of (pathEnv ?? '').split(':')) {
    if (!isAbsolute(dir)) continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      if (statSync(candidate).isFile()) return candidate
    } catch {
      // not here; next PATH entry
    }
  }
  return name
}
