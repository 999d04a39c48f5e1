// Every refusal of the bash tools, asserted exactly: seed 001's validation texts, and ours in its form.
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { runtimePlugin } from '@toolvisor/process-runtime'
import { toolboxPlugin } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { BashError, bashPlugin } from '../src/index.js'
import { compose, tempDir } from './helpers.js'

describe('bash tools (seed 001): bad input', () => {
  it("refuses bad arguments with seed 001's texts, starting nothing", async () => {
    const { call, tasks } = await compose()
    const cases: Array<[string, unknown, string]> = [
      ['bash', { description: 'd' }, 'invalid command: expected a non-empty string'],
      ['bash', { command: '   ', description: 'd' }, 'invalid command: expected a non-empty string'],
      ['bash', { command: 7, description: 'd' }, 'invalid command: expected a non-empty string'],
      ['bash', { command: 'true' }, 'invalid description: expected a non-empty string'],
      ['bash', { command: 'true', description: '' }, 'invalid description: expected a non-empty string'],
      [
        'bash',
        { command: 'true', description: 'd', timeoutMs: -1 },
        'invalid timeoutMs: expected a positive number, got -1',
      ],
      [
        'bash',
        { command: 'true', description: 'd', timeoutMs: 0 },
        'invalid timeoutMs: expected a positive number, got 0',
      ],
      [
        'bash',
        { command: 'true', description: 'd', timeoutMs: '5' },
        'invalid timeoutMs: expected a positive number, got "5"',
      ],
      ['bash_output', { task_id: '' }, 'invalid task_id: expected a string, got ""'],
      ['bash_output', { task_id: 3 }, 'invalid task_id: expected a string, got 3'],
      ['bash_output', {}, 'invalid task_id: expected a string, got nothing'],
      ['bash_kill', { task_id: null }, 'invalid task_id: expected a string, got null'],
      [
        'bash',
        { command: 'true', description: 'd', env: { A: '1' } },
        'invalid arguments: unknown key "env"; the keys are command, description, timeoutMs, workdir, run_in_background, name, wait_seconds',
      ],
      ['bash', 'echo hi', 'invalid arguments: expected an object, got "echo hi"'],
      [
        'bash',
        { command: 'true', description: 'd', run_in_background: 'yes' },
        'invalid run_in_background: expected a boolean, got "yes"',
      ],
      [
        'bash',
        { command: 'true', description: 'd', name: 'job' },
        'invalid name: only a background task has a name',
      ],
      [
        'bash',
        { command: 'true', description: 'd', wait_seconds: 2 },
        'invalid wait_seconds: only a background task is waited for (run_in_background: true)',
      ],
      [
        'bash',
        { command: 'true', description: 'd', run_in_background: true, name: 'Build_1' },
        'invalid name: expected 1 to 63 characters of a-z, 0-9 and -, got "Build_1"',
      ],
      [
        'bash',
        { command: 'true', description: 'd', run_in_background: true, name: 'x'.repeat(64) },
        `invalid name: expected 1 to 63 characters of a-z, 0-9 and -, got "${'x'.repeat(60)}"… (64 characters)`,
      ],
      [
        'bash',
        { command: 'true', description: 'd', run_in_background: true, wait_seconds: -2 },
        'invalid wait_seconds: expected a number of seconds, 0 or more, got -2',
      ],
      [
        'bash',
        { command: 'true', description: 'd', workdir: '' },
        'invalid workdir: expected a non-empty string',
      ],
      [
        'bash',
        { command: 'true', description: 'd', workdir: '/nonexistent-dir' },
        'invalid workdir: /nonexistent-dir is not a directory (ENOENT); nothing was started',
      ],
      [
        'bash',
        { command: 'true', description: 'd', workdir: '/etc/passwd' },
        'invalid workdir: /etc/passwd is not a directory (not a directory); nothing was started',
      ],
      ['bash_output', { task_id: 'nope' }, 'no task nope'],
      ['bash_kill', { task_id: 'nope' }, 'no task nope'],
    ]
    for (const [tool, args, message] of cases) {
      expect(await call(tool, args), `${tool} ${JSON.stringify(args)}`).toMatchObject({
        text: `Error: ${message}`,
        isError: true,
      })
    }
    expect(tasks.all()).toEqual([])
  })

  it('refuses a task that is no background shell', async () => {
    const { call, tasks, runtime } = await compose()
    const tool = await runtime.preparePlain({ name: 'sleeper', file: '/bin/sleep', mode: 'stream' })
    const task = tasks.add({
      kind: 'stream',
      tool: 'sleeper',
      owner: 'alice',
      start: () => runtime.start({ tool, argv: ['30'] }),
    })
    for (const name of ['bash_output', 'bash_kill']) {
      expect(await call(name, { task_id: task.id })).toMatchObject({
        text: `Error: task ${task.id} is a stream task, not a background shell`,
        isError: true,
      })
    }
    expect(tasks.get(task.id, 'alice').exit).toBeUndefined()
    await tasks.cancel(task.id, 'alice')
  })
})

describe('bash plugin: bad configuration', () => {
  it('refuses a bash that is not there, and bounds that contradict each other, naming them', async () => {
    const missing = new Kernel()
    missing.use(runtimePlugin, { stateDir: tempDir() })
    missing.use(toolboxPlugin, {})
    missing.use(describePlugin)
    const loading = missing.use(bashPlugin, { bash: '/nonexistent/bash' })
    const error = await Promise.resolve(loading).then(
      () => undefined,
      (e: unknown) => e as Error & { cause?: unknown },
    )
    const cause = error?.cause
    expect(BashError.is(cause) && cause.code).toBe('BASH_ERR_NO_BASH')
    expect((cause as Error).message).toBe(
      'tool-bash: bash /nonexistent/bash is not an executable file; set the bash option to one',
    )
    await missing.dispose()
    const contradicting = new Kernel()
    expect(() => contradicting.use(bashPlugin, { defaultTimeoutMs: 5000, maxTimeoutMs: 1000 })).toThrow(
      /defaultTimeoutMs must not exceed maxTimeoutMs/,
    )
    await contradicting.dispose()
  })
})
