import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describePlugin } from '@toolvisor/describe-v2'
import { definePlugin, Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { type Envelope, MailboxToken, mailboxPlugin } from '@toolvisor/mailbox'
import { networkGates } from '@toolvisor/network'
import {
  markedProcesses,
  NetworkGatesToken,
  type Runtime,
  RuntimeToken,
  runtimePlugin,
} from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { bwrapPlugin } from '@toolvisor/sandbox-bwrap'
import { landlockPlugin } from '@toolvisor/sandbox-landlock'
import { SessionsToken, TasksToken, tasksPlugin } from '@toolvisor/tasks'
import { processesPlugin } from '@toolvisor/tool-processes'
import {
  type Approval,
  ApprovalToken,
  type ToolCallContext,
  type ToolResult,
  ToolsToken,
  toolboxPlugin,
} from '@toolvisor/toolbox'
import { afterEach, expect } from 'vitest'
import { z } from 'zod'
import { BashToken, bashPlugin } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A temporary directory (its real path), removed after the test. */
export function tempDir(prefix = 'tv-bash-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A call's outcome: its one text, whether it is an error, and the result itself. */
export interface Called {
  readonly text: string
  readonly isError: boolean
  readonly result: ToolResult
}

/**
 * A kernel with the runtime, the toolbox (sessions), the mailbox and the processes tool (unless
 * `mailbox` is false: then neither) and the bash plugin configured with `bash`. Sessions `alice` and `bob` are open (sessions and mailbox). After
 * the test the kernel is disposed and nothing it started may still run. With a `sandbox`, the
 * network gates too (the modes' default network is an allow list), their proxy resolving names
 * from `names` only (the test seam: never DNS).
 */
export async function compose(
  bash: Record<string, unknown> = {},
  {
    mailbox = true,
    sandbox,
    approval,
    names = {},
    runtime: runtimeOptions = {},
  }: {
    mailbox?: boolean
    sandbox?: 'bwrap' | 'landlock'
    approval?: Approval
    /** What the network gates' proxy resolves each name to (with a `sandbox`). */
    names?: Readonly<Record<string, readonly string[]>>
    /** More options of the runtime plugin (`spillBytes`, ...). */
    runtime?: Record<string, unknown>
  } = {},
) {
  const stateDir = tempDir('tv-bash-state-')
  const kernel = new Kernel()
  kernel.use(describePlugin)
  // The launch path the CLI composes (a cgroup per launch, real pipes): bash runs on it there.
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, {
    stateDir,
    spawner: 'native',
    ...(sandbox ? { sandbox, network: { gates: true } } : {}),
    ...runtimeOptions,
  })
  if (sandbox) kernel.use(gatesHost, { socketDir: join(stateDir, 'net'), names })
  kernel.use(tasksPlugin)
  if (sandbox === 'bwrap') kernel.use(bwrapPlugin, {})
  if (sandbox === 'landlock') kernel.use(landlockPlugin, {})
  // A host's own approval service (as a host library provides one): the seam, not a stand-in.
  if (approval) kernel.use(approvalHost, approval)
  kernel.use(toolboxPlugin, {})
  // The processes tool (and its session mail) needs a mailbox.
  if (mailbox) kernel.use(processesPlugin, {})
  if (mailbox) kernel.use(mailboxPlugin, {})
  try {
    kernel.use(bashPlugin, bash)
    await kernel.ready({ timeoutMs: 20_000 })
  } catch (error) {
    // Refused at start-up: whatever did start goes.
    await kernel.dispose()
    throw error
  }
  const runtime = kernel.get(RuntimeToken) as Runtime
  const runId = runtime.runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(await eventually(() => markedProcesses(runId).length === 0, 5000), 'processes left').toBe(true)
    rmSync(stateDir, { recursive: true, force: true })
  })
  const tools = kernel.get(ToolsToken)!
  const sessions = kernel.get(SessionsToken)!
  const box = kernel.get(MailboxToken)
  for (const id of ['alice', 'bob']) {
    sessions.open({ id })
    box?.open(id)
  }
  const call = async (
    name: string,
    args: unknown,
    session: string | undefined = 'alice',
    signal?: AbortSignal,
  ) => {
    const ctx: ToolCallContext = {
      ...(session !== undefined ? { sessionId: session } : {}),
      signal: signal ?? new AbortController().signal,
    }
    const result = await tools.call(name, args, ctx)
    return {
      text: result.content.map((c) => c.text).join('\n'),
      isError: result.isError,
      result,
    } satisfies Called
  }
  /** The mail `session` has not read yet (read without moving its delivery cursor). */
  const mail = (session = 'alice'): Envelope[] => [...(box?.page(session).envelopes ?? [])]
  return {
    kernel,
    runtime,
    runId,
    tools,
    sessions,
    tasks: kernel.get(TasksToken)!,
    host: kernel.get(BashToken)!,
    call,
    mail,
  }
}

/** The network gates, their proxy resolving names from a fixed map (the test seam). */
const gatesHost = definePlugin({
  name: 'test-network-gates',
  provides: [NetworkGatesToken],
  config: z.object({ socketDir: z.string(), names: z.record(z.string(), z.array(z.string()).readonly()) }),
  apply(ctx, { socketDir, names }) {
    const gates = networkGates({ socketDir, proxy: { resolve: async (host) => names[host] ?? [] } })
    ctx.provide(NetworkGatesToken, gates)
    ctx.onDispose(async () => {
      await gates[Symbol.asyncDispose]()
    })
  },
})

const approvalHost = definePlugin({
  name: 'test-approval',
  provides: [ApprovalToken],
  config: z.custom<Approval>((value) => typeof (value as Approval | undefined)?.request === 'function'),
  apply(ctx, approval) {
    ctx.provide(ApprovalToken, approval)
  },
})

/** True once `pid` is gone (or a zombie): how a test sees that a kill reached a process. */
export function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return true
  }
}
