// The approval seam over MCP elicitation, in process: each answer of the user, a client without
// elicitation, a session with no connection, a withdrawn question; and the tools' annotations and
// cards as a client sees them.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import { type ApprovalRequest, type ConnectionId, createToolRegistry, type Tool } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import { approvalMessage, createMcpServer, McpApprovals, PRESENTATION_META_KEY } from '../src/index.js'
import { schema, text, tool } from './helpers.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!()
})

/** A client (answering elicitations with `answer`, or declaring none) on a server with `approvals`. */
async function connected(approvals: McpApprovals, answer?: (message: string) => Promise<ElicitResult>) {
  const tools = createToolRegistry()
  tools.register(tool('plain', async () => text('ok')))
  const surface = createMcpServer(tools, {
    name: 't',
    version: '1',
    sessionId: 's1',
    approvals,
    log: () => {},
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await surface.connect(serverSide)
  const client = new Client({ name: 'c', version: '1' }, { capabilities: answer ? { elicitation: {} } : {} })
  if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message))
  await client.connect(clientSide)
  closers.push(() => surface.close())
  return { client, tools, surface }
}

/** The question a call on `connection` asks (a bash escalation). */
const question = (
  connection: ConnectionId | undefined,
  signal = new AbortController().signal,
): ApprovalRequest => ({
  sessionId: 's1',
  connection,
  tool: 'bash',
  command: 'touch /etc/x',
  justification: 'The build writes there.',
  workdir: '/home/me/project',
  background: false,
  mode: 'danger-full-access',
  signal,
})

describe('McpApprovals: the approval seam through elicitation', () => {
  it('accept, decline and cancel are allowed-once, rejected and cancelled; the message shows the command', async () => {
    const approvals = new McpApprovals()
    const seen: string[] = []
    let next: ElicitResult['action'] = 'accept'
    const { surface } = await connected(approvals, async (message) => {
      seen.push(message)
      return next === 'accept' ? { action: 'accept', content: {} } : { action: next }
    })
    const asked = question(surface.connection)
    expect(await approvals.request(asked)).toBe('allowed-once')
    next = 'decline'
    expect(await approvals.request(asked)).toBe('rejected')
    next = 'cancel'
    expect(await approvals.request(asked)).toBe('cancelled')
    expect(seen[0]).toBe(approvalMessage(asked))
    expect(seen[0]).toBe(
      [
        'Allow bash to run this exact command once under the "danger-full-access" sandbox mode?',
        '',
        'Justification: The build writes there.',
        'Working directory (workdir): /home/me/project',
        'In the background (run_in_background): no',
        '',
        'The command, 1 line:',
        '```',
        '1 | touch /etc/x',
        '```',
        '',
        'Accept allows this one call only; nothing is remembered. Decline refuses it.',
      ].join('\n'),
    )
  })

  it('a client without elicitation, another session, or no session is unavailable', async () => {
    const approvals = new McpApprovals()
    const { surface } = await connected(approvals)
    expect(await approvals.request(question(surface.connection))).toBe('unavailable')
    const answering = await connected(approvals, async () => ({ action: 'accept', content: {} }))
    const mine = question(answering.surface.connection)
    expect(await approvals.request({ ...mine, sessionId: 'other' })).toBe('unavailable')
    expect(await approvals.request({ ...mine, sessionId: undefined })).toBe('unavailable')
    expect(await approvals.request(mine)).toBe('allowed-once')
  })

  it('a question withdrawn by the call (aborted while the user has it) is cancelled', async () => {
    const approvals = new McpApprovals()
    const stop = new AbortController()
    const { surface } = await connected(approvals, () => {
      stop.abort()
      return new Promise(() => {}) // the user never answers
    })
    expect(await approvals.request(question(surface.connection, stop.signal))).toBe('cancelled')
  })

  it('once the connection closed, its calls are no longer asked', async () => {
    const approvals = new McpApprovals()
    const { surface } = await connected(approvals, async () => ({ action: 'accept', content: {} }))
    await closers.pop()!()
    expect(await approvals.request(question(surface.connection))).toBe('unavailable')
  })
})

describe('McpApprovals: a question goes to the connection that made the call, never by session name', () => {
  it('two connections of one session: each call asks its own connection; one that closed is unavailable', async () => {
    const approvals = new McpApprovals()
    const asked: string[] = []
    const first = await connected(approvals, async () => {
      asked.push('first')
      return { action: 'decline' }
    })
    const second = await connected(approvals, async () => {
      asked.push('second')
      return { action: 'accept', content: {} }
    })
    expect(await approvals.request(question(first.surface.connection))).toBe('rejected')
    expect(await approvals.request(question(second.surface.connection))).toBe('allowed-once')
    expect(asked).toEqual(['first', 'second'])
    await first.surface.close()
    // The second connection of the session is still there: the first's question must not reach it.
    expect(await approvals.request(question(first.surface.connection))).toBe('unavailable')
    expect(asked).toEqual(['first', 'second'])
  })

  it('a request without a connection is unavailable, even with a connection of its session attached', async () => {
    const approvals = new McpApprovals()
    let asked = 0
    await connected(approvals, async () => {
      asked += 1
      return { action: 'accept', content: {} }
    })
    expect(await approvals.request(question(undefined))).toBe('unavailable')
    expect(asked).toBe(0)
  })
})

describe('annotations and cards over MCP', () => {
  it('lists a tool annotations as set, none for a tool without them; cards ride in _meta', async () => {
    const { client, tools } = await connected(new McpApprovals())
    const drawn: Tool = {
      ...tool('drawn', async () => text('done')),
      inputSchema: schema('x'),
      annotations: { title: 'Drawn', readOnlyHint: true },
      presentCall: (args) => ({ card: 'generic', title: 'call', rawInput: args }),
      presentResult: (_args, result) => ({
        card: 'generic',
        title: 'result',
        content: [result.content[0]!.text],
      }),
    }
    const broken: Tool = {
      ...tool('broken', async () => text('fine')),
      presentCall: () => {
        throw new Error('a presenter bug')
      },
    }
    tools.register(drawn)
    tools.register(broken)
    const listed = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.annotations]))
    expect(listed).toEqual({
      plain: undefined,
      drawn: { title: 'Drawn', readOnlyHint: true },
      broken: undefined,
    })
    const result = (await client.callTool({ name: 'drawn', arguments: { x: '1' } })) as CallToolResult
    expect(result._meta?.[PRESENTATION_META_KEY]).toEqual({
      call: { card: 'generic', title: 'call', rawInput: { x: '1' } },
      result: { card: 'generic', title: 'result', content: ['done'] },
    })
    const plain = (await client.callTool({ name: 'plain', arguments: {} })) as CallToolResult
    expect(plain._meta?.[PRESENTATION_META_KEY]).toBeUndefined()
    const survived = (await client.callTool({ name: 'broken', arguments: {} })) as CallToolResult
    expect(survived).toMatchObject({ content: [{ type: 'text', text: 'fine' }], isError: false })
    expect(survived._meta?.[PRESENTATION_META_KEY]).toBeUndefined()
  })
})
