import { lstatSync, rmdirSync, unlinkSync } from 'node:fs'

/** A placeholder a mechanism makes where a protected path is missing: an empty directory or file. */
export interface Placeholder {
  readonly path: string
  readonly kind: 'dir' | 'file'
}

/** Removes a placeholder if it still is one; anything else (content put there since) is left. */
export function removePlaceholder(placeholder: Placeholder): void {
  let stat: ReturnType<typeof lstatSync>
  try {
    stat = lstatSync(placeholder.path)
  } catch {
    return
  }
  try {
    if (placeholder.kind === 'dir' && stat.isDirectory()) rmdirSync(placeholder.path)
    else if (placeholder.kind === 'file' && stat.isFile() && stat.size === 0) unlinkSync(placeholder.path)
  } catch {
    // not empty, or gone meanwhile: left as it is
  }
}
