// Seed 001's background tasks: bash_output's cursor and status lines, bash_kill, names, the inline
// wait and the completion mail, asserted exactly.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { markedProcesses } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { compose, tempDir } from './helpers.js'

const bg = (command: string, extra: Record<string, unknown> = {}) => ({
  command,
  description: 'run it in the background',
  run_in_background: true,
  ...extra,
})
/** A shell line that waits (polling, bounded) until the test creates `file`. */
const until = (file: string) => `for i in $(seq 1 600); do [ -e ${file} ] && break; sleep 0.05; done`
const notice = (id: string, status: string) =>
  `background bash task ${id} finished ${status}. Read its output with bash_output.`

describe('bash (seed 001), background tasks', () => {
  it('reads only what is new, stdout and stderr, with exactly one status line; the end once: mail, withdrawn when a read shows it', async () => {
    const { call, tasks, mail } = await compose()
    const go = join(tempDir(), 'go')
    expect((await call('bash', bg(`echo one; ${until(go)}; echo two >&2; exit 4`))).text).toBe(
      'started background task bash-1',
    )
    const process = tasks.process('bash-1', 'alice')
    expect(await eventually(() => process.output.counters().stdoutBytes === 4)).toBe(true)
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe('one\n\n[status: running]')
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe('(no new output)\n[status: running]')
    expect(mail()).toEqual([])
    writeFileSync(go, '')
    expect(await eventually(() => tasks.get('bash-1', 'alice').exit !== undefined, 20_000)).toBe(true)
    expect(mail().map((e) => [e.from, e.kind, e.body])).toEqual([
      ['task:bash-1', 'completion', notice('bash-1', '[status: completed, exit code: 4]')],
    ])
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      '[stderr]\ntwo\n\n[status: completed, exit code: 4]',
    )
    // The read showed the end: the notice, not delivered yet, is withdrawn (decision 0104).
    expect(mail()).toEqual([])
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      '(no new output)\n[status: completed, exit code: 4]',
    )
  })

  it('bash_kill stops a task: killed by SIGTERM, killed when it traps and exits 0, already finished', async () => {
    const { call, tasks, mail } = await compose()
    await call('bash', bg('sleep 30'))
    expect((await call('bash_kill', { task_id: 'bash-1' })).text).toBe('killed background task bash-1')
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      '(no new output)\n[status: killed by SIGTERM]',
    )
    expect((await call('bash_kill', { task_id: 'bash-1' })).text).toBe('task bash-1 had already finished')
    await call('bash', bg('trap "echo bye; exit 0" TERM; echo ready; sleep 30 & wait'))
    const trapping = tasks.process('bash-2', 'alice')
    expect(await eventually(() => trapping.output.counters().stdoutBytes === 6)).toBe(true)
    expect((await call('bash_kill', { task_id: 'bash-2' })).text).toBe('killed background task bash-2')
    expect((await call('bash_output', { task_id: 'bash-2' })).text).toBe('ready\nbye\n\n[status: killed]')
    await call('bash', bg('kill -KILL $$'))
    expect(await eventually(() => tasks.get('bash-3', 'alice').exit !== undefined)).toBe(true)
    expect((await call('bash_output', { task_id: 'bash-3' })).text).toBe(
      '(no new output)\n[status: killed by SIGKILL]',
    )
    // Each end was shown (the kill's answer, a read): no notice is left to deliver (decision 0104).
    expect(mail()).toEqual([])
  })

  it('kills the whole group and what left it (setsid, a double fork): nothing is left', async () => {
    const { call, tasks, runId } = await compose()
    const script = 'sleep 300 & setsid sleep 301 & (sleep 302 &); echo ready; wait'
    await call('bash', bg(script))
    const process = tasks.process('bash-1', 'alice')
    expect(await eventually(() => process.output.counters().stdoutBytes === 6)).toBe(true)
    expect(await eventually(() => markedProcesses(runId).length === 4)).toBe(true)
    expect((await call('bash_kill', { task_id: 'bash-1' })).text).toBe('killed background task bash-1')
    expect(markedProcesses(runId)).toEqual([])
  })

  it('answers in full when the command ends within wait_seconds, and then mails nothing', async () => {
    const { call, mail, tasks } = await compose()
    expect(await call('bash', bg('echo quick; exit 2', { wait_seconds: 20 }))).toMatchObject({
      text: 'quick\n[exit code: 2]',
      isError: false,
    })
    expect(tasks.get('bash-1', 'alice').exit).toMatchObject({ code: 2 })
    expect(mail()).toEqual([])
    // The inline answer was this session's read: bash_output goes on after it.
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      '(no new output)\n[status: completed, exit code: 2]',
    )
    const go = join(tempDir(), 'go')
    expect((await call('bash', bg(`${until(go)}; echo slow`, { wait_seconds: 0.2 }))).text).toBe(
      'started background task bash-2',
    )
    writeFileSync(go, '')
    expect(await eventually(() => mail().length === 1, 20_000)).toBe(true)
    expect(mail()[0]!.body).toBe(notice('bash-2', '[status: completed, exit code: 0]'))
  })

  it('cuts an inline wait to the cap', async () => {
    const { call } = await compose({ maxWaitSeconds: 1 })
    const began = Date.now()
    expect((await call('bash', bg('sleep 30', { wait_seconds: 600 }))).text).toBe(
      'started background task bash-1',
    )
    expect(Date.now() - began).toBeLessThan(20_000)
  })

  it('takes a name as the task id, refuses it while its task runs, reuses it once it ended', async () => {
    const { call } = await compose()
    expect((await call('bash', bg('sleep 30', { name: 'build' }))).text).toBe('started background task build')
    expect(await call('bash', bg('sleep 30', { name: 'build' }))).toMatchObject({
      text: 'Error: task id build is taken by a task still running; nothing was started',
      isError: true,
    })
    await call('bash_kill', { task_id: 'build' })
    expect(await call('bash', bg('sleep 30', { name: 'build' }), 'bob')).toMatchObject({
      text: "Error: task id build is taken by another session's task; nothing was started",
      isError: true,
    })
    expect((await call('bash', bg('echo again', { name: 'build', wait_seconds: 20 }))).text).toBe('again\n')
  })

  it("refuses another session's task with seed 001's text, both ways", async () => {
    const { call } = await compose()
    await call('bash', bg('sleep 30'), 'alice')
    await call('bash', bg('sleep 30'), 'bob')
    for (const tool of ['bash_output', 'bash_kill']) {
      expect(await call(tool, { task_id: 'bash-1' }, 'bob')).toMatchObject({
        text: 'Error: task bash-1 belongs to another session',
        isError: true,
      })
      expect(await call(tool, { task_id: 'bash-2' }, 'alice')).toMatchObject({
        text: 'Error: task bash-2 belongs to another session',
        isError: true,
      })
    }
    expect((await call('bash_output', { task_id: 'bash-1' }, 'alice')).text).toBe(
      '(no new output)\n[status: running]',
    )
  })

  it('a read that fell behind keeps the newest output, says what was dropped, and the spill file has it all', async () => {
    const { call, tasks } = await compose({ outputBytes: 1000 })
    const dir = tempDir()
    const script = `seq 1 3000; ${until(join(dir, 'more'))}; seq 5001 5003; ${until(join(dir, 'end'))}`
    await call('bash', bg(script))
    const process = tasks.process('bash-1', 'alice')
    const first = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join('')
    expect(await eventually(() => process.output.counters().stdoutBytes === first.length)).toBe(true)
    const read = await call('bash_output', { task_id: 'bash-1' })
    const match =
      /^([\s\S]*)\n\[some output was dropped from memory; full output: (\/\S+)\]\n\[status: running\]$/.exec(
        read.text,
      )
    expect(match, read.text).not.toBeNull()
    expect(match![1]!.length).toBeLessThanOrEqual(1000)
    expect(first.endsWith(match![1]!)).toBe(true)
    expect(readFileSync(match![2]!, 'utf8')).toBe(first)
    writeFileSync(join(dir, 'more'), '')
    expect(await eventually(() => process.output.counters().stdoutBytes === first.length + 15)).toBe(true)
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      '5001\n5002\n5003\n\n[status: running]',
    )
    writeFileSync(join(dir, 'end'), '')
    expect(await eventually(() => tasks.get('bash-1', 'alice').exit !== undefined, 20_000)).toBe(true)
    expect(readFileSync(match![2]!, 'utf8')).toBe(`${first}5001\n5002\n5003\n`)
    expect(existsSync(match![2]!)).toBe(true)
  })

  it('a read that fell behind a spill cut at its cap says how much the file did not keep (decision 0092)', async () => {
    const { call, tasks } = await compose({ outputBytes: 1000 }, { runtime: { spillBytes: 5000 } })
    const dir = tempDir()
    await call('bash', bg(`seq 1 3000; ${until(join(dir, 'end'))}`))
    const process = tasks.process('bash-1', 'alice')
    const first = Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join('')
    expect(await eventually(() => process.output.counters().stdoutBytes === first.length)).toBe(true)
    const read = await call('bash_output', { task_id: 'bash-1' })
    const match =
      /^([\s\S]*)\n\[some output was dropped from memory; what is kept of it: (\/\S+); (\d+) bytes past the first 5000 were not kept: the spill file's cap is 5000 bytes\]\n\[status: running\]$/.exec(
        read.text,
      )
    expect(match, read.text).not.toBeNull()
    expect(first.endsWith(match![1]!)).toBe(true)
    expect(Number(match![3])).toBe(first.length - 5000)
    expect(readFileSync(match![2]!, 'utf8')).toBe(first.slice(0, 5000))
    writeFileSync(join(dir, 'end'), '')
    expect(await eventually(() => tasks.get('bash-1', 'alice').exit !== undefined, 20_000)).toBe(true)
  })

  it('mails nothing when the owner has no open mailbox, or there is no mailbox at all', async () => {
    const withMailbox = await compose()
    withMailbox.sessions.open({ id: 'carol' })
    await withMailbox.call('bash', bg('true'), 'carol')
    expect(await eventually(() => withMailbox.tasks.get('bash-1', 'carol').exit !== undefined)).toBe(true)
    const none = await compose({}, { mailbox: false })
    expect((await none.call('bash', bg('echo fine'))).text).toBe('started background task bash-1')
    expect(await eventually(() => none.tasks.get('bash-1', 'alice').exit !== undefined)).toBe(true)
    expect((await none.call('bash_output', { task_id: 'bash-1' })).text).toBe(
      'fine\n\n[status: completed, exit code: 0]',
    )
  })

  it('says why when toolvisor itself killed the command: its fork server died (background and foreground)', async () => {
    const { call, tasks, runtime } = await compose()
    await call('bash', bg('echo $PPID; exec sleep 30'))
    const process = tasks.process('bash-1', 'alice')
    expect(await eventually(() => process.output.counters().stdoutBytes > 1)).toBe(true)
    const server = Number.parseInt((await call('bash_output', { task_id: 'bash-1' })).text, 10)
    expect(readFileSync(`/proc/${server}/comm`, 'utf8').trim()).toBe('toolvisor-spawn')
    const foreground = call('bash', { command: 'sleep 30', description: 'wait in the foreground' })
    // The foreground command runs once the server has forked it too.
    const children = () => readFileSync(`/proc/${server}/task/${server}/children`, 'utf8').trim().split(' ')
    // Forked and exec'd (both run sleep): the server answers a launch once its exec reports.
    const comm = (pid: string) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
      } catch {
        return ''
      }
    }
    // (The server's other child is the one waiting in the next command's cgroups, not a command.)
    const sleeps = () => children().filter((pid) => comm(pid) === 'sleep')
    expect(await eventually(() => sleeps().length === 2)).toBe(true)
    // And the runtime read the server's answer for both (its run log has their pids): a kill
    // before that is a launch that never completed, which fails as such.
    const log = join(runtime.options.stateDir, 'runs', runtime.runId, 'processes.log')
    const tracked = () => sleeps().every((pid) => readFileSync(log, 'utf8').includes(`"pid":${pid},`))
    expect(await eventually(tracked)).toBe(true)
    globalThis.process.kill(server, 'SIGKILL')
    const why =
      '[killed by toolvisor: the fork server ended (SIGKILL), and what it forked cannot be followed]'
    expect((await foreground).text).toBe(`(no output)\n${why}\n[killed by signal: SIGKILL]`)
    expect(await eventually(() => tasks.get('bash-1', 'alice').exit !== undefined)).toBe(true)
    expect((await call('bash_output', { task_id: 'bash-1' })).text).toBe(
      `(no new output)\n${why}\n[status: killed by SIGKILL]`,
    )
    // A new fork server for what comes next, which ends as usual.
    expect(
      (await call('bash', { command: 'echo again', description: 'run after the server died' })).text,
    ).toBe('again\n')
  })
})
