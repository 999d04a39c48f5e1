import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describePlugin } from '@toolvisor/describe-v2'
import { Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { MailboxToken, mailboxPlugin } from '@toolvisor/mailbox'
import { markedProcesses, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { SessionsToken, TasksToken, tasksPlugin } from '@toolvisor/tasks'
import { type ToolCallContext, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, expect } from 'vitest'
import { processesPlugin } from '../src/index.js'

export const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/**
 * A kernel with the fixtures toolbox and the processes tool. `call` answers the parsed JSON of a
 * call, `raw` the result itself. After the test, no process it started may be left.
 */
export async function compose(
  processes: Record<string, unknown> = {},
  toolbox: Record<string, unknown> = {},
  mailbox: Record<string, unknown> = {},
  runtime: Record<string, unknown> = {},
) {
  const stateDir = mkdtempSync(join(tmpdir(), 'tv-proc-'))
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, { stateDir, spawner: 'native', ...runtime })
  kernel.use(tasksPlugin)
  kernel.use(mailboxPlugin, mailbox)
  kernel.use(toolboxPlugin, { toolboxes: [fixtures], yieldMs: 100, ...toolbox })
  await kernel.use(processesPlugin, processes)
  const runId = (kernel.get(RuntimeToken) as unknown as { runId: string }).runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(markedProcesses(runId)).toEqual([])
    rmSync(stateDir, { recursive: true, force: true })
  })
  const tools = kernel.get(ToolsToken)!
  const tasks = kernel.get(TasksToken)!
  const sessions = kernel.get(SessionsToken)!
  const mail = kernel.get(MailboxToken)!
  const raw = (name: string, args: unknown, session = 'alice') => {
    const ctx: ToolCallContext = { sessionId: session, signal: new AbortController().signal }
    return tools.call(name, args, ctx)
  }
  const call = async (name: string, args: unknown, session = 'alice') => {
    const result = await raw(name, args, session)
    return { isError: result.isError, body: JSON.parse(result.content[0]!.text) }
  }
  /** Waits until task `id` of `session` ended (no fixed sleep: the registry's own bounded wait). */
  const ended = (id: string, session = 'alice') => tasks.wait(id, session, 10_000)
  return { kernel, tools, tasks, sessions, mail, runId, call, raw, ended }
}

/** A temp directory removed after the test. */
export function tempDir(prefix = 'tv-svc-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** An envelope as `processes wait` answers it. */
export interface MailJson {
  readonly id: string
  readonly seq: number
  readonly from: string
  readonly kind: 'event' | 'digest' | 'completion' | 'control'
  readonly body: unknown
  readonly events: number
  readonly omitted: number
}

type Call = Awaited<ReturnType<typeof compose>>['call']

/**
 * Calls `processes wait` until `done(all mail so far)` holds or `timeoutMs` passed; returns the
 * mail. A bound, never a fixed sleep: each wait returns as soon as mail arrives.
 */
export async function mailUntil(
  call: Call,
  session: string,
  done: (mail: readonly MailJson[]) => boolean,
  timeoutMs = 15_000,
): Promise<MailJson[]> {
  const mail: MailJson[] = []
  const end = Date.now() + timeoutMs
  while (!done(mail) && Date.now() < end) {
    const answer = await call('processes', { command: 'wait', timeout_seconds: 2 }, session)
    expect(answer.isError, JSON.stringify(answer.body)).toBe(false)
    mail.push(...(answer.body.mail as MailJson[]))
  }
  return mail
}

/** The events the mail of `from` carries, oldest first (the bodies of its event and digest envelopes). */
export function eventsFrom(mail: readonly MailJson[], from: string): unknown[] {
  return mail
    .filter((m) => m.from === from && (m.kind === 'event' || m.kind === 'digest'))
    .flatMap((m) => (m.kind === 'digest' ? (m.body as unknown[]) : [m.body]))
}

/** The answer of `processes stop` for a process that exited with `exitCode` on its declared cancel. */
export function cancelled(process: string, exitCode: number) {
  return { process, status: 'exited', exitCode, signal: null, reason: 'cancelled' }
}
