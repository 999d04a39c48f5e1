import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ToolProgress } from '../src/index.js'
import { compose, ctx, examples, fixtures, tempDir, textOf } from './helpers.js'

describe('loading a toolbox', () => {
  it('serves every good tool and reports each broken one with its path and reason', async () => {
    const dir = join(fixtures, 'broken')
    const { tools } = await compose([dir], { describeTimeoutMs: 3000 })
    expect(tools.list().map((t) => t.name)).toEqual(['word_count'])
    const reports = tools
      .loadErrors()
      .map((r) => [r.severity, r.code, r.message])
      .sort()
    expect(reports).toEqual(
      [
        [
          'error',
          'DESCRIBE_ERR_NOT_JSON',
          expect.stringMatching(new RegExp(`^${dir}/bad-json: describe must print one JSON`)),
        ],
        [
          'error',
          'DESCRIBE_ERR_INVALID_FIELD',
          expect.stringMatching(
            new RegExp(
              `^${dir}/wrong-type: \\$\\.args\\[0\\]\\.mode: expected one of positional, dashdashspace, dashdashequal, stdin, env; got "flag"`,
            ),
          ),
        ],
        ['error', 'TOOLBOX_ERR_DESCRIBE_FAILED', `${dir}/hangs: describe did not answer within 3 s`],
        [
          'error',
          'TOOLBOX_ERR_DESCRIBE_FAILED',
          `${dir}/exits-1: describe exited with code 1: cannot describe myself: config missing`,
        ],
        [
          'error',
          'TOOLBOX_ERR_UNSUPPORTED_MODE',
          `${dir}/service: $.process.mode: service tools need the service mode handler of @toolvisor/tool-processes (processesPlugin), which this toolvisor does not compose; it runs oneshot and stream tools`,
        ],
      ].sort(),
    )
    // And the good tool works.
    const result = await tools.call('word_count', { text: 'two words\n' }, ctx())
    expect(result.isError).toBe(false)
  })

  it('reports a toolbox directory that does not exist, and still loads the others', async () => {
    const { tools } = await compose(['/no/such/toolbox', join(fixtures, 'tools')])
    expect(tools.loadErrors()).toEqual([
      expect.objectContaining({
        code: 'TOOLBOX_ERR_TOOLBOX_UNREADABLE',
        message: '/no/such/toolbox: cannot read the toolbox: ENOENT',
      }),
    ])
    expect(tools.list().length).toBeGreaterThan(0)
  })
})

describe('describe documents with typos', () => {
  it('serves the tool and reports the likely typo as a warning naming the JSON path', async () => {
    const dir = join(fixtures, 'typos')
    const { tools } = await compose([dir])
    expect(tools.list().map((t) => t.name)).toEqual(['misspelt'])
    expect(tools.loadErrors()).toEqual([
      {
        severity: 'warning',
        tool: `${dir}/misspelt`,
        code: 'TOOLBOX_WARN_DESCRIBE',
        message: `${dir}/misspelt: $.proccess: unknown key, ignored; did you mean "process"?`,
      },
    ])
  })
})

describe('oneshot calls', () => {
  it('passes one argument of each mode exactly as the protocol says', async () => {
    const { tools } = await compose([examples])
    const result = await tools.call(
      'echo_args',
      { path: 'a b', pattern: 'x*', limit: 7, note: 'hello\nworld', 'api-token': 's3cr3t' },
      ctx(),
    )
    expect(result.isError).toBe(false)
    expect(JSON.parse(textOf(result))).toEqual({
      argv: ['a b', '--pattern', 'x*', '--limit=7'],
      stdin: 'hello\nworld\n',
      env: { API_TOKEN: 's3cr3t' },
    })
  })

  it('refuses an object argument without running the tool', async () => {
    const { tools } = await compose([examples])
    const result = await tools.call('echo_args', { path: {}, pattern: 'p', limit: 1, note: 'n' }, ctx())
    expect(result).toMatchObject({ isError: true })
    expect(textOf(result)).toBe(
      'echo_args: argument "path": expected a string; got an object; the arguments are "path" (string, required), ' +
        '"pattern" (string, required), "limit" (integer, required), "note" (string, required), "api-token" (string, optional); ' +
        'the tool was not run',
    )
  })

  it('returns the events of a jsonl oneshot as a JSON array, invalid lines as invalid events', async () => {
    const { tools } = await compose([examples])
    const progress: ToolProgress[] = []
    const result = await tools.call(
      'file_stats',
      { path: fixtures, bad: true },
      ctx({ progress: (p) => progress.push(p) }),
    )
    expect(result.isError).toBe(false)
    const events = JSON.parse(textOf(result)) as Array<Record<string, unknown>>
    expect(events.filter((e) => e.invalid === true)).toEqual([
      {
        invalid: true,
        raw: expect.any(String),
        error: expect.stringMatching(/^does not match output\.event: /),
      },
    ])
    expect(events.filter((e) => e.name === 'broken')).toEqual([
      { name: 'broken', size: expect.any(Number), kind: 'dir' },
    ])
    expect(result.structuredContent).toEqual({ events })
    expect(progress.map((p) => p.progress)).toEqual(events.map((_, i) => i + 1))
  })

  it('bounds a 50 MB result, says so, and names the spill file that holds every byte', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    const size = 50 * 1024 * 1024
    const result = await tools.call('flood', { size }, ctx())
    const body = textOf(result)
    expect(result.isError).toBe(false)
    const spill = result.meta?.stdoutSpill as string
    expect(body.startsWith('x'.repeat(1000))).toBe(true)
    const process = result.meta?.process as string
    expect(body.slice(body.lastIndexOf('\n') + 1)).toBe(
      `[output truncated: showing the first 262144 of ${size} bytes; ` +
        `read on with processes {"command":"output","process":"${process}","offset":262144}]`,
    )
    const bytes = readFileSync(spill)
    expect(bytes.length).toBe(size)
    expect(createHash('sha1').update(bytes).digest('hex')).toBe(
      createHash('sha1').update(Buffer.alloc(size, 'x')).digest('hex'),
    )
  })

  it('reports a failure with the exit code and the tails of stdout and stderr', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    const result = await tools.call('fails', {}, ctx())
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(
      'fails failed: exit code 3\n--- stdout ---\npartial result\n--- stderr ---\nthe real reason',
    )
    expect(result.meta).toMatchObject({ exitCode: 3 })
  })

  it('applies empty-result to an exactly empty stdout', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    expect(textOf(await tools.call('quiet', {}, ctx()))).toBe('nothing to report')
  })

  it('leaves no process of the group alive when the caller cancels', async () => {
    const { tools, runId } = await compose([join(fixtures, 'tools')])
    const controller = new AbortController()
    const call = tools.call('spawner', {}, ctx({ signal: controller.signal }))
    const { markedProcesses } = await import('@toolvisor/process-runtime')
    // spawner, its child and its grandchild
    const deadline = Date.now() + 10_000
    while (markedProcesses(runId).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25))
    expect(markedProcesses(runId).length).toBeGreaterThanOrEqual(3)
    controller.abort()
    const result = await call
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/^spawner failed: cancelled \(/)
    expect(markedProcesses(runId)).toEqual([])
  })
})

describe('arguments checked against the input schema before anything runs', () => {
  const list =
    '; the arguments are "marker" (string, required), "times" (integer, required), "name" (string, optional), ' +
    '"label" (string, optional); the tool was not run'

  it('runs nothing for a wrong type or an unknown argument, and says what was expected and what exists', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    const marker = join(tempDir(), 'ran')
    const wrongType = await tools.call('touch', { marker, times: 'three' }, ctx())
    expect(wrongType.isError).toBe(true)
    expect(textOf(wrongType)).toBe(`touch: argument "times": expected an integer; got "three"${list}`)
    const unknown = await tools.call('touch', { marker, times: 3, tims: 3 }, ctx())
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toBe(`touch: argument "tims": no such argument (did you mean "times"?)${list}`)
    const unsafe = await tools.call('touch', { marker, times: 2 ** 60 }, ctx())
    expect(textOf(unsafe)).toBe(
      'touch: argument "times": expected an integer from -9007199254740991 to 9007199254740991 (beyond, digits are lost); ' +
        `got 1152921504606847000${list}`,
    )
    expect(existsSync(marker)).toBe(false)
  })

  it('runs nothing for a positional value that would be read as an option', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    const marker = join(tempDir(), 'ran')
    const result = await tools.call('touch', { marker, times: 1, name: '--help' }, ctx())
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(
      'touch: argument "name": "--help" starts with "-", which the tool would read as an option; ' +
        'this argument does not accept values that start with "-"; the tool was not run',
    )
    expect(existsSync(marker)).toBe(false)
  })

  it('runs the tool with the values the schema allows: "3" as 3, a "-" value where allow_dash is declared', async () => {
    const { tools } = await compose([join(fixtures, 'tools')])
    const marker = join(tempDir(), 'ran')
    const result = await tools.call('touch', { marker, times: '3', name: 'a-b', label: '-x' }, ctx())
    expect(result.isError).toBe(false)
    expect(readFileSync(marker, 'utf8')).toBe('--times=3\na-b\n--label\n-x\n')
  })
})

describe('commands and help', () => {
  it('exposes each command as slug.command and runs TOOL run <command> <args>', async () => {
    const { tools } = await compose([examples])
    const names = tools.list().map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['git_lite.status', 'git_lite.log', 'help']))
    expect(names).not.toContain('git_lite')
    expect(tools.safeName('git_lite.status')).toBe('git_lite__status')
    expect(tools.get('git_lite__log')?.name).toBe('git_lite.log')
    const repo = join(examples, '..', '..')
    const log = await tools.call('git_lite__log', { dir: repo, n: 1 }, ctx())
    expect(log.isError).toBe(false)
    expect(textOf(log).split('\n').filter(Boolean)).toHaveLength(1)
  })

  it('serves longer help on demand through the shared help tool', async () => {
    const { tools } = await compose([examples])
    const help = tools.get('help')!
    expect(help.inputSchema).toMatchObject({
      properties: { tool: { enum: ['git_lite__status', 'git_lite__log'] } },
    })
    const result = await tools.call('help', { tool: 'git_lite__log' }, ctx())
    expect(result.isError).toBe(false)
    expect(textOf(result).length).toBeGreaterThan(20)
    const unknown = await tools.call('help', { tool: 'nope' }, ctx())
    expect(textOf(unknown)).toBe('help: no help for "nope"; tools with help: git_lite__status, git_lite__log')
  })
})

describe('stream calls', () => {
  it('returns the event sequence when the stream ends within the yield window, with progress for each event', async () => {
    const { tools, tasks } = await compose([join(fixtures, 'tools')], { streamResultEvents: 3 })
    const progress: ToolProgress[] = []
    const result = await tools.call('ticker', { count: 5 }, ctx({ progress: (p) => progress.push(p) }))
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe(
      '["tick 2","tick 3","tick 4"]\n[2 earlier events elided (a result holds the last 3 events and 262144 bytes at most); ' +
        'the task keeps them: page them with processes {"command":"page","process":"t1","offset":0}]',
    )
    expect(progress.map((p) => p.message)).toEqual(['tick 0', 'tick 1', 'tick 2', 'tick 3', 'tick 4'])
    expect(tasks.list('session-1')).toEqual([
      expect.objectContaining({ id: 't1', kind: 'stream', tool: 'ticker' }),
    ])
  })

  it('answers with a running placeholder after the yield window, and the task keeps running', async () => {
    const { tools, tasks } = await compose([join(fixtures, 'tools')], { yieldMs: 200 })
    const result = await tools.call('ticker', { count: 1000 }, ctx())
    expect(JSON.parse(textOf(result))).toEqual({
      status: 'running',
      task: 't1',
      tool: 'ticker',
      message:
        'still running after 0.2 s; its events arrive as progress. Read them with processes {"command":"read","process":"t1"} ' +
        '(each read goes on where the last ended), check it with {"command":"status","process":"t1"}, stop it with {"command":"stop","process":"t1"}.',
    })
    const before = tasks.read('t1', 'session-1').total
    await new Promise((r) => setTimeout(r, 200))
    expect(tasks.read('t1', 'session-1').total).toBeGreaterThan(before)
    expect(() => tasks.get('t1', 'session-2')).toThrow('task t1 belongs to another session')
    await tasks.cancel('t1', 'session-1')
  })
})
