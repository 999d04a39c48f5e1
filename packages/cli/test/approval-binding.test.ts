// Who answers an approval (issue 26, point 1; the review's "approval goes to whichever connection
// last attached the session's name"): two MCP clients of one `toolvisor serve` session name
// (x-toolvisor-session), both declaring elicitation. The first calls bash with an escalation; the
// question must reach the first connection only, and the second can neither see nor answer it.
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { describe, expect, it, onTestFinished } from 'vitest'
import { tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'
import { clients, serve, textOf } from './serve-helpers.js'

/** What one client was asked: the message and the JSON-RPC id of each `elicitation/create`. */
interface Asked {
  readonly message: string
  readonly id: string | number
}

/** A client of `url` in the toolvisor session `named` that declares elicitation and answers with `answer`. */
async function elicitingClient(
  url: string,
  token: string,
  named: string,
  answer: (asked: Asked) => Promise<ElicitResult>,
) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}`, 'x-toolvisor-session': named } },
  })
  const client = new Client({ name: 'binding-test', version: '0' }, { capabilities: { elicitation: {} } })
  const asked: Asked[] = []
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const seen = { message: request.params.message, id: extra.requestId }
    asked.push(seen)
    return answer(seen)
  })
  await client.connect(transport)
  clients.push(client)
  return { client, transport, asked }
}

const escalation = (marker: string) => ({
  command: `echo ran > ${marker}`,
  description: 'Write a marker file',
  sandbox_permissions: 'danger-full-access',
  justification: 'The test writes its marker file.',
})

describe.skipIf(!hasBwrap || !isRoot)('approvals are answered by the connection that called', () => {
  it("two connections of one serve session name: only the caller is asked; the other's answer to that id does nothing", async () => {
    // bash's read-only mode runs in serve's folder: one the sandbox user reads, wherever the checkout is.
    const cwd = sandboxUserDir(import.meta.dirname, 'binding-work')
    onTestFinished(() => rmSync(cwd, { recursive: true, force: true }))
    const server = await serve(
      ['--bash', '--sandbox', 'bwrap', '--bash-sandbox', 'read-only'],
      undefined,
      {},
      { cwd },
    )
    const marker = join(tempDir('tv-binding-'), 'ran')
    let second: Awaited<ReturnType<typeof elicitingClient>> | undefined
    const first = await elicitingClient(server.url, server.token, 'shared', async (asked) => {
      // The other client of the name answers the caller's question by its id (a guess it can make:
      // ids count from 0 on every connection), accepting it, before the caller declines.
      await second!.transport.send({
        jsonrpc: '2.0',
        id: asked.id,
        result: { action: 'accept', content: {} },
      })
      return { action: 'decline' }
    })
    // The second attaches last, so a question routed by session name would reach it.
    second = await elicitingClient(server.url, server.token, 'shared', async () => ({
      action: 'accept',
      content: {},
    }))
    const result = await first.client.callTool({ name: 'bash', arguments: escalation(marker) })
    expect(second.asked).toEqual([])
    expect(first.asked).toHaveLength(1)
    expect(first.asked[0]!.message).toContain(`echo ran > ${marker}`)
    expect(textOf(result)).toBe('Error: the user rejected escalating this command to "danger-full-access"')
    expect(existsSync(marker)).toBe(false)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  })
})
