import type { ToolResult } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { presentBashCall, presentBashResult, presentTaskCall, presentTaskResult } from './present.js'

const result = (text: string, meta?: Record<string, unknown>, isError = false): ToolResult => ({
  content: [{ type: 'text', text }],
  isError,
  ...(meta ? { meta } : {}),
})

describe("seed 001's cards, one for every call shape", () => {
  it('a foreground bash is a terminal card: the exact command, the description, the cwd as given', () => {
    expect(
      presentBashCall({ command: 'ls -la src', description: 'List the sources', workdir: 'src' }),
    ).toEqual({
      card: 'terminal',
      title: 'ls -la src',
      description: 'List the sources',
      cwd: 'src',
    })
    expect(presentBashCall({ command: 'pwd', description: 'Where' })).toEqual({
      card: 'terminal',
      title: 'pwd',
      description: 'Where',
    })
  })

  it('its result carries the raw output without the exit marker, and the exit code or signal', () => {
    const args = { command: 'make', description: 'Build' }
    expect(presentBashResult(args, result('oops\n[exit code: 2]', { exitCode: 2, signal: null }))).toEqual({
      card: 'terminal',
      title: 'make',
      output: 'oops',
      exitCode: 2,
    })
    expect(
      presentBashResult(
        args,
        result('(no output)\n[killed by signal: SIGKILL]', { exitCode: null, signal: 'SIGKILL' }),
      ),
    ).toEqual({ card: 'terminal', title: 'make', output: '(no output)', signal: 'SIGKILL' })
    // A replayed result without meta: no pill, the text as is.
    expect(presentBashResult(args, result('done'))).toEqual({
      card: 'terminal',
      title: 'make',
      output: 'done',
    })
  })

  it('an error result (a refusal, a failed start, an abort) is generic, with no exit pill', () => {
    const args = { command: 'make', description: 'Build' }
    expect(presentBashResult(args, result('Error: command aborted', undefined, true))).toEqual({
      card: 'generic',
      title: 'make',
      kind: 'execute',
      content: ['Error: command aborted'],
    })
  })

  it('a background bash is a generic execute card with the command as raw input', () => {
    const args = { command: 'npm run dev', description: 'Start the dev server', run_in_background: true }
    expect(presentBashCall(args)).toEqual({
      card: 'generic',
      title: 'npm run dev',
      kind: 'execute',
      rawInput: 'npm run dev',
      content: ['Start the dev server'],
    })
    expect(presentBashResult(args, result('started background task t1'))).toEqual({
      card: 'generic',
      title: 'npm run dev',
      kind: 'execute',
      content: ['started background task t1'],
    })
  })

  it('bash_output and bash_kill are generic cards with task-scoped titles and the task id as raw input', () => {
    expect(presentTaskCall('Read output from', { task_id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'Read output from background task bash-3',
      kind: 'read',
      rawInput: 'bash-3',
    })
    expect(presentTaskCall('Kill', { task_id: 'bash-3' })).toEqual({
      card: 'generic',
      title: 'Kill background task bash-3',
      kind: 'delete',
      rawInput: 'bash-3',
    })
    expect(
      presentTaskResult('Kill', { task_id: 'bash-3' }, result('killed background task bash-3')),
    ).toMatchObject({
      title: 'Kill background task bash-3',
      content: ['killed background task bash-3'],
    })
  })

  it('malformed or older argument shapes fall back to a generic card and never throw', () => {
    for (const args of [undefined, null, 'ls', 42, [], { cmd: 'ls' }, { command: 7 }, { command: '' }]) {
      expect(presentBashCall(args)).toEqual({
        card: 'generic',
        title: 'bash',
        kind: 'execute',
        rawInput: args,
      })
      expect(presentBashResult(args, result('x'))).toEqual({
        card: 'generic',
        title: 'bash',
        kind: 'execute',
        content: ['x'],
      })
      expect(presentTaskCall('Read output from', args)).toEqual({
        card: 'generic',
        title: 'Read output from background task',
        kind: 'read',
        rawInput: args,
      })
    }
    expect(presentTaskCall('Kill', { id: 'bash-3' })).toMatchObject({ title: 'Kill background task' })
  })
})
