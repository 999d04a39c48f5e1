/** Paths in `toolvisor.json` made absolute: the CLI's sections' path keys, the bash section's. */
import type { Config } from '../config.js'
import { SECTION_FLAGS, type SectionFlag } from './options.js'

/** The keys of the CLI's sections whose value names a path (a file, or an address that may be `unix:PATH`). */
const SECTION_PATHS = Object.entries(SECTION_FLAGS).flatMap(([section, flags]) =>
  Object.entries(flags as Record<string, SectionFlag>).flatMap(([key, flag]) =>
    flag.path ? [{ section, key, path: flag.path }] : [],
  ),
)

/** `unix:PATH` with PATH made absolute; `HOST:PORT`, URLs and a bare `unix:` (refused later) as they are. */
export function address(abs: (path: string) => string): (text: string) => string {
  return (text) => (text.startsWith('unix:') && text.length > 5 ? `unix:${abs(text.slice(5))}` : text)
}

/** Makes the string at `section.name` absolute, in place (the sections are the CLI's own, fresh from the parse). */
function absoluteAt(config: Config, section: string, name: string, abs: (path: string) => string): void {
  const holder = (config as Record<string, unknown>)[section] as Record<string, unknown> | undefined
  const value = holder?.[name]
  if (holder && typeof value === 'string') holder[name] = abs(value)
  else if (holder && Array.isArray(value))
    holder[name] = value.map((item) => (typeof item === 'string' ? abs(item) : item))
}

/** The bash section with its paths made absolute (a bare `bash` name stays a name, found on PATH). */
export function bashPaths(
  bash: NonNullable<Config['bash']>,
  abs: (path: string) => string,
): NonNullable<Config['bash']> {
  return {
    ...bash,
    ...(bash.workdir ? { workdir: abs(bash.workdir) } : {}),
    ...(bash.bash?.includes('/') ? { bash: abs(bash.bash) } : {}),
  }
}

/**
 * Makes every path key of the CLI's sections absolute, in place (a string, or each item of a
 * list; an address only when it is `unix:PATH`).
 */
export function sectionPathsAbsolute(config: Config, abs: (path: string) => string): void {
  for (const { section, key, path } of SECTION_PATHS) {
    absoluteAt(config, section, key, path === 'address' ? address(abs) : abs)
  }
}
