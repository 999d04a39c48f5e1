import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { RuntimeError } from '@toolvisor/launchers'

/** What an envdir says: variables to set, and variables to remove (empty files). */
export interface EnvdirVariables {
  readonly set: Readonly<Record<string, string>>
  readonly unset: readonly string[]
}

/**
 * Reads an envdir the daemontools way (ruling 18): one file per variable, named after it; the value
 * is the file's first line with trailing spaces and tabs removed and NUL bytes turned into newlines;
 * an empty file unsets the variable; names containing `=` are ignored, as are subdirectories.
 * Values are secrets: callers never log them.
 */
export function readEnvdir(dir: string): EnvdirVariables {
  const set: Record<string, string> = {}
  const unset: string[] = []
  for (const name of entries(dir)) {
    if (name.includes('=') || name.startsWith('.')) continue
    const file = join(dir, name)
    const content = readEntry(file)
    if (content === undefined) continue
    if (content.length === 0) {
      unset.push(name)
      continue
    }
    const newline = content.indexOf(10)
    const firstLine = (newline === -1 ? content : content.subarray(0, newline)).toString('utf8')
    set[name] = firstLine.replace(/[ \t]+$/, '').replaceAll('\0', '\n')
  }
  return { set, unset }
}

/** Why an envdir cannot be read: a RuntimeError naming `$.runtime.envdir` and the path. */
function unreadable(path: string, error: unknown): RuntimeError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
  const hint = code === 'ENOENT' ? ' (a dangling link, or removed since load)' : ''
  return new RuntimeError(
    'RUNTIME_ERR_ENVDIR',
    `$.runtime.envdir: ${path} cannot be read: ${code}${hint}; the tool was not started: fix the envdir`,
  )
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort()
  } catch (error) {
    throw unreadable(dir, error)
  }
}

/** A file's bytes; `undefined` for a subdirectory (ignored). */
function readEntry(file: string): Buffer | undefined {
  try {
    if (!statSync(file).isFile()) return undefined
    return readFileSync(file)
  } catch (error) {
    throw unreadable(file, error)
  }
}
