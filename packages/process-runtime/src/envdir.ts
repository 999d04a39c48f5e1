import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

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
  for (const name of readdirSync(dir).sort()) {
    if (name.includes('=') || name.startsWith('.')) continue
    const file = join(dir, name)
    if (!statSync(file).isFile()) continue
    const content = readFileSync(file)
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
