import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { UiError } from './errors.js'

/** One file of the page. */
export interface Asset {
  readonly type: string
  readonly body: Buffer
}

/** The page's files, by the path they are served at; all of them ship in the package's `assets/`. */
const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'render.js': 'text/javascript; charset=utf-8',
  'tail.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
  'login.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
}

/**
 * The terminal emulator the page shows a terminal task with (xterm.js, the browser twin of the
 * emulator the screen is rendered by), served from this package's own dependency: no CDN.
 */
const VENDOR: Readonly<Record<string, { readonly path: string; readonly type: string }>> = {
  'xterm.mjs': { path: 'lib/xterm.mjs', type: 'text/javascript; charset=utf-8' },
  'xterm.css': { path: 'css/xterm.css', type: 'text/css; charset=utf-8' },
}

/** The directory the files are read from (beside `src/` and `dist/` alike). */
export const ASSETS_DIR = new URL('../assets/', import.meta.url)

/** Where `@xterm/xterm` is installed, as this package resolves it. */
function xtermDir(): URL {
  const manifest = createRequire(import.meta.url).resolve('@xterm/xterm/package.json')
  return new URL('./', pathToFileURL(manifest))
}

/** Reads every file of the page once (they are small); a missing one is a broken install. */
export function loadAssets(dir: URL = ASSETS_DIR): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>()
  for (const [name, type] of Object.entries(FILES)) {
    try {
      assets.set(name, { type, body: readFileSync(new URL(name, dir)) })
    } catch (error) {
      throw new UiError(
        'UI_ERR_ASSETS_MISSING',
        `the operator page's ${name} is missing from ${dir.pathname}: reinstall @toolvisor/operator-ui`,
        { cause: error },
      )
    }
  }
  for (const [name, { path, type }] of Object.entries(VENDOR)) {
    try {
      assets.set(name, { type, body: readFileSync(new URL(path, xtermDir())) })
    } catch (error) {
      throw new UiError(
        'UI_ERR_ASSETS_MISSING',
        `the operator page's ${name} (@xterm/xterm ${path}) is missing: reinstall @toolvisor/operator-ui`,
        { cause: error },
      )
    }
  }
  return assets
}
