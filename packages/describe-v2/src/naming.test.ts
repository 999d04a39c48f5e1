import { describe, expect, it } from 'vitest'
import { argumentNameProblem, envVariableName, internalName } from './naming.js'

describe('naming', () => {
  it('builds internal names as slug or slug.command', () => {
    expect(internalName('git')).toBe('git')
    expect(internalName('git', 'log')).toBe('git.log')
    expect(internalName('log_watcher', 'send')).toBe('log_watcher.send')
    expect(internalName('tool', '')).toBe('tool.')
  })

  it.each([
    ['token', 'TOKEN'],
    ['api-token', 'API_TOKEN'],
    ['Mixed_case-name', 'MIXED_CASE_NAME'],
    ['a--b', 'A__B'],
  ])('turns the argument %s into the variable %s', (name, variable) => {
    expect(envVariableName(name)).toBe(variable)
  })

  it('accepts argument names usable as flags and variables', () => {
    for (const name of ['path', 'check_action', 'api-token', 'é', 'a.b', '-x']) {
      expect(argumentNameProblem(name)).toBeUndefined()
    }
    for (const name of ['', 'a=b', 'a b', 'a\tb', 'a\0b', '\u2003']) {
      expect(argumentNameProblem(name)).toBe(
        'expected a non-empty name without "=", whitespace or NUL (it is used as --name and as an environment variable name)',
      )
    }
  })
})
