// Every refusal of the bash tools, asserted exactly: seed 001's validation texts, and ours in its form.
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { runtimePlugin } from '@toolvisor/process-runtime'
import { tasksPlugin } from '@toolvisor/tasks'
import { toolboxPlugin } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { BashError, bashPlugin } from '../src/index.js'
import { compose, tempDir } from './helpers.js'

describe('bash tools (seed 001): bad input', () => {
  it("refuses bad arguments with seed 001's texts, starting nothing", async () => {
    const { call, tasks } = await compose()
    /** `bash` arguments: a valid call with `extra` over it. */
    const b = (extra: Record<string, unknown>) => ({ command: 'true', description: 'd', ...extra })
    const bg = (extra: Record<string, unknown>) => b({ run_in_background: true, ...extra })
    const keys =
      'command, description, timeoutMs, workdir, run_in_background, name, wait_seconds, tty, columns, rows, sandbox_permissions, network_allow, justification'
    const nameRule = 'expected 1 to 63 characters of a-z, 0-9 and -, got'
    const notDir = (path: string, why: string) =>
      `invalid workdir: ${path} is not a directory (${why}); nothing was started`
    const bashCases: Array<[unknown, string]> = [
      [{ description: 'd' }, 'invalid command: expected a non-empty string'],
      [b({ command: '   ' }), 'invalid command: expected a non-empty string'],
      [b({ command: 7 }), 'invalid command: expected a non-empty string'],
      [{ command: 'true' }, 'invalid description: expected a non-empty string'],
      [b({ description: '' }), 'invalid description: expected a non-empty string'],
      [b({ timeoutMs: -1 }), 'invalid timeoutMs: expected a positive number, got -1'],
      [b({ timeoutMs: 0 }), 'invalid timeoutMs: expected a positive number, got 0'],
      [b({ timeoutMs: '5' }), 'invalid timeoutMs: expected a positive number, got "5"'],
      [b({ env: { A: '1' } }), `invalid arguments: unknown key "env"; the keys are ${keys}`],
      // A name of Object.prototype is no field either (it once passed, ignored).
      [b({ constructor: 1 }), `invalid arguments: unknown key "constructor"; the keys are ${keys}`],
      [JSON.parse('{"__proto__": 1}'), `invalid arguments: unknown key "__proto__"; the keys are ${keys}`],
      ['echo hi', 'invalid arguments: expected an object, got "echo hi"'],
      [b({ run_in_background: 'yes' }), 'invalid run_in_background: expected a boolean, got "yes"'],
      [b({ name: 'job' }), 'invalid name: only a background task has a name'],
      [
        b({ wait_seconds: 2 }),
        'invalid wait_seconds: only a background task is waited for (run_in_background: true)',
      ],
      [bg({ name: 'Build_1' }), `invalid name: ${nameRule} "Build_1"`],
      [bg({ name: 'x'.repeat(64) }), `invalid name: ${nameRule} "${'x'.repeat(60)}"… (64 characters)`],
      [bg({ wait_seconds: -2 }), 'invalid wait_seconds: expected a number of seconds, 0 or more, got -2'],
      [b({ workdir: '' }), 'invalid workdir: expected a non-empty string'],
      [b({ workdir: '/nonexistent-dir' }), notDir('/nonexistent-dir', 'ENOENT')],
      [b({ workdir: '/etc/passwd' }), notDir('/etc/passwd', 'not a directory')],
    ]
    const cases: Array<[string, unknown, string]> = [
      ...bashCases.map(([args, message]) => ['bash', args, message] as [string, unknown, string]),
      ['bash_output', { task_id: '' }, 'invalid task_id: expected a string, got ""'],
      ['bash_output', { task_id: 3 }, 'invalid task_id: expected a string, got 3'],
      ['bash_output', {}, 'invalid task_id: expected a string, got nothing'],
      ['bash_kill', { task_id: null }, 'invalid task_id: expected a string, got null'],
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
    missing.use(tasksPlugin)
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
