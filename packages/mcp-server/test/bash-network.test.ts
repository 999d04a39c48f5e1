// A bash command's network escalation over MCP (decision 0112), end to end in process: the bash
// tools under bwrap with the network gates (their proxy resolving names from a fixed map: the test
// seam), `McpApprovals` as the `approval` service, and the SDK client answering the elicitation.
// A blocked name is marked and hinted; retried with network_allow, the user sees the name in the
// question, and accepting lets that one call reach a real server once, the next call is blocked
// again; declining runs nothing. Run as root (commands run as the sandbox user, nobody).
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import { describePlugin } from '@toolvisor/describe-v2'
import { definePlugin, Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { networkGates } from '@toolvisor/network'
import {
  markedProcesses,
  NetworkGatesToken,
  type Runtime,
  RuntimeToken,
  runtimePlugin,
} from '@toolvisor/process-runtime'
import { eventually, sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { bwrapPlugin } from '@toolvisor/sandbox-bwrap'
import { tasksPlugin } from '@toolvisor/tasks'
import { bashPlugin } from '@toolvisor/tool-bash'
import { ApprovalToken, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { createMcpServer, McpApprovals } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** A site on 127.0.0.1 that counts what it answered; closed after the test. */
async function site(): Promise<{ port: number; requests: string[] }> {
  const requests: string[] = []
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    res.end('hello from the host\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, requests }
}

/**
 * The bash tools (dsh, workspace-write, the default network: an empty allow list) under bwrap,
 * the gates resolving `unlisted.test` to 127.0.0.1, `approvals` providing `approval`; an SDK
 * client answering each elicitation with `answer`. Disposed after the test, nothing left running.
 */
async function served(answer: (message: string) => ElicitResult) {
  const stateDir = mkdtempSync(join(tmpdir(), 'tv-mcp-net-'))
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }))
  const work = sandboxUserDir(import.meta.dirname, 'work')
  cleanups.push(() => rmSync(work, { recursive: true, force: true }))
  const approvals = new McpApprovals()
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, { stateDir, spawner: 'native', sandbox: 'bwrap', network: { gates: true } })
  kernel.use(bwrapPlugin, {})
  kernel.use(
    definePlugin({
      name: 'test-network-gates',
      provides: [NetworkGatesToken],
      apply(ctx) {
        // The test seam: names from a fixed map, never DNS.
        const gates = networkGates({
          socketDir: join(stateDir, 'net'),
          proxy: { resolve: async (host) => (host === 'unlisted.test' ? ['127.0.0.1'] : []) },
        })
        ctx.provide(NetworkGatesToken, gates)
        ctx.onDispose(async () => {
          await gates[Symbol.asyncDispose]()
        })
      },
    }),
  )
  kernel.use(
    definePlugin({
      name: 'test-approvals',
      provides: [ApprovalToken],
      apply(ctx) {
        ctx.provide(ApprovalToken, approvals)
      },
    }),
  )
  kernel.use(tasksPlugin)
  kernel.use(toolboxPlugin, {})
  kernel.use(bashPlugin, { sandbox: 'workspace-write', workdir: work })
  await kernel.ready({ timeoutMs: 20_000 })
  const runId = (kernel.get(RuntimeToken) as Runtime).runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(await eventually(() => markedProcesses(runId).length === 0, 5000), 'processes left').toBe(true)
  })
  const surface = createMcpServer(kernel.get(ToolsToken)!, {
    name: 'toolvisor-net',
    version: '0.0.0',
    sessionId: 's1',
    approvals,
    log: () => {},
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await surface.connect(serverSide)
  const client = new Client({ name: 'net-test', version: '0.0.0' }, { capabilities: { elicitation: {} } })
  const asked: string[] = []
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message)
    return answer(request.params.message)
  })
  await client.connect(clientSide)
  cleanups.push(async () => {
    await client.close()
    await surface.close()
  })
  const call = async (args: Record<string, unknown>) => {
    const result = (await client.callTool({ name: 'bash', arguments: args })) as CallToolResult
    return result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n')
  }
  return { call, asked, work }
}

const WHY = 'The test fetches its page.'
const fetchPage = (port: number) => ({
  command: `curl -sS -f http://unlisted.test:${port}/`,
  description: 'Fetch the page',
})
const HINT =
  '[network: escalation available — retry this exact command once with network_allow ["unlisted.test"] + justification; the approval prompt asks the user]'

describe.skipIf(process.getuid?.() !== 0)(
  'network_allow over MCP elicitation (root: commands run as nobody)',
  () => {
    it('accepted: the user saw the name, that one call reaches the server once, the next is blocked again', async () => {
      const page = await site()
      const { call, asked, work } = await served(() => ({ action: 'accept', content: {} }))
      const blocked = await call(fetchPage(page.port))
      expect(blocked).toContain(`[network: blocked unlisted.test:${page.port}, not in the allow list]`)
      expect(blocked.endsWith(`\n${HINT}\n[exit code: 22]`)).toBe(true)
      expect(asked).toEqual([])

      const once = await call({
        ...fetchPage(page.port),
        network_allow: ['unlisted.test'],
        justification: WHY,
      })
      expect(once).toBe('hello from the host\n')
      expect(page.requests).toEqual(['GET /'])
      expect(asked).toEqual([
        [
          'Allow bash to run this exact command once under the "workspace-write" sandbox mode, and let it also reach the network names below?',
          '',
          `Justification: ${WHY}`,
          `Working directory (workdir): ${work}`,
          'In the background (run_in_background): no',
          '',
          'The network names it may also reach for this call, 1 name:',
          '```',
          '1 | unlisted.test',
          '```',
          '',
          'The command, 1 line:',
          '```',
          `1 | curl -sS -f http://unlisted.test:${page.port}/`,
          '```',
          '',
          'Accept allows this one call only; nothing is remembered. Decline refuses it.',
        ].join('\n'),
      ])

      const again = await call(fetchPage(page.port))
      expect(again.endsWith(`\n${HINT}\n[exit code: 22]`)).toBe(true)
      expect(page.requests).toEqual(['GET /'])
    })

    it('declined: the call fails with its text and the server sees no request', async () => {
      const page = await site()
      const { call, asked } = await served(() => ({ action: 'decline' }))
      const declined = await call({
        ...fetchPage(page.port),
        network_allow: ['unlisted.test'],
        justification: WHY,
      })
      expect(declined).toBe('Error: the user rejected letting this command reach "unlisted.test"')
      expect(asked).toHaveLength(1)
      expect(page.requests).toEqual([])
    })
  },
)
