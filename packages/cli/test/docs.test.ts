/**
 * The docs stand alone (issue 18.5): every relative link in the README, `docs/` and the package
 * READMEs names a file of this repository (and, with a `#fragment`, a heading of that file), and no
 * page sends the reader to design documents outside it.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { examples, tempDir } from './helpers.js'

const root = resolve(examples, '..', '..')

/** The Markdown pages checked: README.md, everything under docs/ (but typedoc's docs/api), each package README. */
function pages(): string[] {
  const found = [join(root, 'README.md')]
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) {
        if (path !== join(root, 'docs', 'api')) walk(path)
      } else if (name.endsWith('.md')) found.push(path)
    }
  }
  walk(join(root, 'docs'))
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const readme = join(root, 'packages', pkg, 'README.md')
    if (existsSync(readme)) found.push(readme)
  }
  return found
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-')
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)))
}

/** Every inline link target of a page, outside code blocks and code spans. */
function linksOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!)
}

describe('the documentation', () => {
  it('links only to files and headings that exist in the repository', () => {
    const broken: string[] = []
    let checked = 0
    for (const page of pages()) {
      for (const link of linksOf(page)) {
        if (/^[a-z]+:/i.test(link)) continue // https:, mailto:
        checked += 1
        const [path, fragment] = link.split('#')
        const target = path === '' ? page : resolve(dirname(page), decodeURIComponent(path!))
        const where = `${relative(root, page)}: ${link}`
        if (!target.startsWith(`${root}/`) && target !== root)
          broken.push(`${where} (outside the repository)`)
        else if (!existsSync(target)) broken.push(`${where} (no such file)`)
        else if (fragment && target.endsWith('.md') && !anchorsOf(target).has(fragment))
          broken.push(`${where} (no heading #${fragment})`)
      }
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(50)
  })

  it('never sends the reader to the design documents outside the repository', () => {
    const outside = pages().filter((page) =>
      /spec\/protocol\.md|\.\.\/shared\//.test(readFileSync(page, 'utf8')),
    )
    expect(outside.map((page) => relative(root, page))).toEqual([])
  })

  it('builds the API site from every public symbol, each documented (pnpm docs: typedoc, warnings are errors)', () => {
    const out = tempDir('tv-typedoc-')
    const typedoc = spawnSync(join(root, 'node_modules', '.bin', 'typedoc'), ['--out', out], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    })
    const output = `${typedoc.stdout}${typedoc.stderr}`
    expect(output.split('\n').filter((line) => /\[(warning|error)\]/.test(line))).toEqual([])
    expect(typedoc.status).toBe(0)
    for (const pkg of readdirSync(join(root, 'packages'))) {
      expect(existsSync(join(out, 'modules', `_toolvisor_${pkg}.html`)), pkg).toBe(true)
    }
  }, 180_000)
})
