import { readFileSync } from 'node:fs'
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
  'favicon.svg': 'image/svg+xml',
}

/** The directory the files are read from (beside `src/` and `dist/` alike). */
export const ASSETS_DIR = new URL('../assets/', import.meta.url)

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
  return assets
}
