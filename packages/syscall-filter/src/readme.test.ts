import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { callLines, familyRows } from '../scripts/families-table.mjs'
import { ARGUMENT_RULES, SYSCALL_FAMILIES } from './families.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const section = readme.slice(readme.indexOf('## The families'), readme.indexOf('## Errors'))
const security = readFileSync(new URL('../../../docs/security.md', import.meta.url), 'utf8')
const securitySection = security.slice(
  security.indexOf('## The syscall filter'),
  security.indexOf('## The vectors'),
)

/** The rows of the first table in `text`, cell by cell (the header and the rule left out). */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\| (family|-)/.test(line))
    .map((line) =>
      line
        .slice(2, -2)
        .split(/ (?<!\\)\| /)
        .map((c) => c.trim()),
    )
}

describe('the README (node scripts/families-table.mjs prints what it must hold)', () => {
  it('shows the families table as the code has it: family, rule, why', () => {
    expect(tableRows(section)).toEqual(familyRows(SYSCALL_FAMILIES, ARGUMENT_RULES))
  })

  it("and so does docs/security.md's filter table", () => {
    expect(tableRows(securitySection)).toEqual(familyRows(SYSCALL_FAMILIES, ARGUMENT_RULES))
  })

  it("lists each family's calls as the code has them", () => {
    expect(section.split('\n').filter((line) => line.startsWith('- **'))).toEqual(callLines(SYSCALL_FAMILIES))
  })
})
