import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'

/**
 * Pins an executable a mechanism runs (bwrap, setpriv, a launcher) to an absolute path, searched on
 * the runtime's own PATH. A bare name would be looked up on the PATH of the launch's environment,
 * which a tool's declared `environment` shapes: a tool must never choose what starts it, least of
 * all what runs as root. A name with a `/` is made absolute. Whether the binary works is never
 * decided here (mechanisms find that out by running it); a name not found is returned as is.
 */
export function pinnedExecutable(name: string, pathEnv: string | undefined = process.env.PATH): string {
  if (name.includes('/')) return resolve(name)
  for (const dir of (pathEnv ?? '').split(delimiter)) {
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
