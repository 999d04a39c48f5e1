// Rules the whole source tree keeps (issue 11): small files, short functions (a longer one says
// why beside it), and every error code thrown listed in its package's table.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../../..')
const MAX_FILE_LINES = 300
const MAX_FUNCTION_LINES = 60
/** What a comment above a longer function must say: `Longer than 60 lines: <why>`. */
const REASON = /Longer than 60 lines: \S/

/** Every TypeScript file under a package's src/ (tests kept there included). */
function sources(): string[] {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(path)
    }
  }
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src')
    try {
      if (statSync(src).isDirectory()) walk(src)
    } catch {
      // a package without src
    }
  }
  return files
}

const files = sources()
/** The code itself: a test's describe callback is long by nature. */
const code = files.filter((path) => !path.endsWith('.test.ts'))
const named = (path: string) => relative(root, path)

describe('the source tree', () => {
  it('has TypeScript sources to check (the walk found the packages)', () => {
    expect(files.length).toBeGreaterThan(50)
  })

  it(`has no file over ${MAX_FILE_LINES} lines in any src/`, () => {
    const long = files
      .map((path) => [named(path), readFileSync(path, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > MAX_FILE_LINES)
    expect(long).toEqual([])
  })

  it(`has no function over ${MAX_FUNCTION_LINES} lines without a reason written beside it`, () => {
    const long: string[] = []
    for (const path of code) {
      const text = readFileSync(path, 'utf8')
      const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const body = node.body as ts.Node
          const first = source.getLineAndCharacterOfPosition(body.getStart()).line
          const last = source.getLineAndCharacterOfPosition(body.getEnd()).line
          if (last - first + 1 > MAX_FUNCTION_LINES && !REASON.test(leadingComments(node, text))) {
            long.push(`${named(path)}:${first + 1} (${last - first + 1} lines)`)
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    expect(long).toEqual([])
  })

  it('lists every error code it throws in its package codes table', () => {
    const tables = new Set<string>()
    const used = new Map<string, string>()
    for (const path of code) {
      const text = readFileSync(path, 'utf8')
      for (const match of text.matchAll(/ErrorCodes = \{([\s\S]*?)\} as const/g)) {
        for (const code of match[1]!.matchAll(/'([A-Z0-9]+_ERR_[A-Z0-9_]+)'/g)) tables.add(code[1]!)
      }
      for (const code of text.matchAll(/['`]([A-Z0-9]+_ERR_[A-Z0-9_]+)['`]/g)) {
        if (!used.has(code[1]!)) used.set(code[1]!, named(path))
      }
    }
    expect(tables.size).toBeGreaterThan(20)
    const outside = [...used]
      .filter(([code]) => !tables.has(code))
      .map(([code, where]) => `${code} (${where})`)
    expect(outside).toEqual([])
  })
})

/** The comments above a function, or above the statement that declares it. */
function leadingComments(node: ts.Node, text: string): string {
  let holder: ts.Node = node
  while (
    holder.parent !== undefined &&
    (ts.isVariableDeclaration(holder.parent) ||
      ts.isVariableDeclarationList(holder.parent) ||
      ts.isVariableStatement(holder.parent) ||
      ts.isPropertyAssignment(holder.parent) ||
      ts.isExportAssignment(holder.parent))
  ) {
    holder = holder.parent
  }
  const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? []
  return ranges.map((range) => text.slice(range.pos, range.end)).join('\n')
}
