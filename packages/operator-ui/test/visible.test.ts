// The page's own copy of the visible escaping (assets/render.js cannot import the package) is
// toolvisor's: over every code point, `visible()` writes exactly what `visibleText` writes.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { visibleText } from '@toolvisor/answers'
import { describe, expect, it } from 'vitest'

const render = pathToFileURL(join(import.meta.dirname, '..', 'assets', 'render.js')).href

describe("the page's visible()", () => {
  it('escapes exactly what visibleText escapes, over every code point, CR before LF kept', async () => {
    const { visible } = (await import(render)) as { visible(text: unknown): string }
    const chunk = 0x1000
    for (let from = 0; from <= 0x10ffff; from += chunk) {
      let text = ''
      for (let code = from; code < from + chunk && code <= 0x10ffff; code++) {
        // Lone surrogates are not text a page receives (JSON.parse of the stream gives pairs).
        if (code >= 0xd800 && code <= 0xdfff) continue
        text += `${String.fromCodePoint(code)}x`
      }
      expect(visible(text)).toBe(visibleText(text))
    }
    expect(visible('a\r\nb\rc')).toBe('a\r\nb\\u000dc')
    expect(visible(42)).toBe('42')
  })
})
