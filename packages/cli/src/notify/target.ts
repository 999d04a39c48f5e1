import { isAbsolute, resolve } from 'node:path'

/** Where `serve --notify` pushes the harness's keyed items: a unix stream socket, or an HTTP(S) URL. */
export type NotifyTarget =
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'http'; readonly url: URL }

/**
 * Reads `unix:PATH` (relative to `base`) or an `http:`/`https:` URL; anything else is `undefined`,
 * for the caller to refuse where it was written (a flag, a field of the configuration file).
 */
export function notifyTargetOf(text: string, base: string = process.cwd()): NotifyTarget | undefined {
  if (text.startsWith('unix:')) {
    const path = text.slice(5)
    if (path.length === 0) return undefined
    return { kind: 'unix', path: isAbsolute(path) ? path : resolve(base, path) }
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? { kind: 'http', url } : undefined
}

/** How a target is shown in logs: its path, or its URL without credentials. */
export function shownTarget(target: NotifyTarget): string {
  if (target.kind === 'unix') return `unix:${target.path}`
  const url = new URL(target.url)
  url.username = ''
  url.password = ''
  return url.toString()
}
