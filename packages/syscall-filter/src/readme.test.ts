import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { callLines, familyRows } from '../scripts/families-table.mjs'
import { ARGUMENT_RULES, SYSCALL_FAMILIES } from './families.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const section = readme.slice(readme.indexOf('## The families'), readme.indexOf('## Errors'))

describe('the README (node scripts/families-table.mjs prints what it must hold)', () => {
  it('shows the families table as the code has it: family, rule, why', () => {
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| ') && !/^\| (family|-)/.test(line))
      .map((line) =>
        line
          .slice(2, -2)
          .split(/ (?<!\\)\| /)
          .map((c) => c.trim()),
      )
    expect(rows).toEqual(familyRows(SYSCALL_FAMILIES, ARGUMENT_RULES))
  })

  it("lists each family's calls as the code has them", () => {
    expect(section.split('\n').filter((line) => line.startsWith('- **'))).toEqual(callLines(SYSCALL_FAMILIES))
  })
})
