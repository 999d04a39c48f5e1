import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { createMailbox, type Mailbox } from '@toolvisor/mailbox'
import { createSessions } from '@toolvisor/tasks'
import { processesReadBack as readBack } from '@toolvisor/tool-processes'
import { createToolRegistry } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { connect, deferred, text, tool, waitFor } from './helpers.js'

/** A registry whose `post` tool mails `count` events from process:p1 to the calling session. */
function posting(mailbox: Mailbox) {
  const tools = createToolRegistry()
  tools.register(
    tool('post', async (args, ctx) => {
      const { count = 1, size = 10 } = args as { count?: number; size?: number }
      for (let i = 0; i < count; i++)
        mailbox.post(ctx.sessionId!, {
          from: 'process:p1',
          kind: 'event',
          body: { i, pad: 'x'.repeat(size) },
        })
      return text(`posted ${count}`)
    }),
  )
  tools.register(tool('noop', async () => text('nothing')))
  return tools
}

const texts = (result: unknown) => (result as { content: Array<{ text: string }> }).content.map((c) => c.text)

describe('mail over MCP', () => {
  it('folds the session pending mail into the next result, after the tool own content', async () => {
    const mailbox = createMailbox()
    const { client } = await connect(posting(mailbox), {
      sessionId: 'm1',
      mailbox,
      sessions: createSessions(),
    })
    expect(texts(await client.callTool({ name: 'post', arguments: { count: 2 } }))).toEqual([
      'posted 2',
      '[mail m1 from process:p1] {"i":0,"pad":"xxxxxxxxxx"}',
      '[mail m2 from process:p1] {"i":1,"pad":"xxxxxxxxxx"}',
    ])
    // Delivered once: the next result carries only what came since.
    expect(texts(await client.callTool({ name: 'noop', arguments: {} }))).toEqual(['nothing'])
    mailbox.post('m1', { id: 'done-t3', from: 'task:t3', kind: 'completion', body: { exit: 0 } })
    expect(texts(await client.callTool({ name: 'noop', arguments: {} }))).toEqual([
      'nothing',
      '[mail done-t3 from task:t3] completion: {"exit":0}',
    ])
  })

  it('holds at most mailBytes of mail in one result, says how to read the rest, and folds nothing with 0', async () => {
    const mailbox = createMailbox()
    const { client } = await connect(posting(mailbox), { sessionId: 'm2', mailbox, mailBytes: 300, readBack })
    const first = texts(await client.callTool({ name: 'post', arguments: { count: 5, size: 100 } }))
    expect(first.slice(1, -1).length).toBeLessThan(5)
    expect(first.at(-1)).toBe(
      '[more mail waits than one result holds: call processes {"command":"wait","timeout_seconds":0} to read it]',
    )
    const off = createMailbox()
    const quiet = await connect(posting(off), { sessionId: 'm3', mailbox: off, mailBytes: 0 })
    expect(texts(await quiet.client.callTool({ name: 'post', arguments: { count: 3 } }))).toEqual([
      'posted 3',
    ])
    expect(off.unread('m3')).toBe(3)
  })

  it('keeps the mail of a call the client cancelled for the next result', async () => {
    const mailbox = createMailbox()
    const tools = posting(mailbox)
    const release = deferred<void>()
    tools.register(
      tool('slow', async (_args, ctx) => {
        mailbox.post(ctx.sessionId!, { from: 'system', kind: 'control', body: 'kept' })
        await release.promise
        return text('late')
      }),
    )
    const { client } = await connect(tools, { sessionId: 'm4', mailbox })
    const controller = new AbortController()
    const slow = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal })
    await waitFor(() => mailbox.unread('m4') === 1, 5000, 'the post')
    controller.abort()
    await expect(slow).rejects.toThrow()
    release.resolve()
    expect(texts(await client.callTool({ name: 'noop', arguments: {} }))).toEqual([
      'nothing',
      '[mail m1 from system] control: "kept"',
    ])
  })

  it('sends a logging notice when mail waits, once per delivery point, and declares logging', async () => {
    const mailbox = createMailbox()
    const { client } = await connect(posting(mailbox), { sessionId: 'm5', mailbox, readBack })
    expect(client.getServerCapabilities()?.logging).toEqual({})
    const notices: unknown[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notices.push(n.params))
    const source = mailbox.source('m5', 'process:p1')
    for (let i = 0; i < 100; i++) source.push(i)
    await waitFor(() => notices.length === 1, 5000, 'the notice')
    expect(notices[0]).toEqual({
      level: 'notice',
      logger: 'toolvisor.mail',
      data: '[mail waiting from process:p1] it comes with the next tool result of this session, or call processes {"command":"wait"} to read it now',
    })
    const folded = texts(await client.callTool({ name: 'noop', arguments: {} }))
    expect(folded[1]).toMatch(/^\[mail m1 from process:p1\] 100 events: \[0,1,/)
    source.push('again')
    await waitFor(() => notices.length === 2, 5000, 'the second notice')
    // A client that asks for warnings and above hears no notice.
    await client.setLoggingLevel('warning')
    await client.callTool({ name: 'noop', arguments: {} })
    source.push('quiet')
    await client.callTool({ name: 'noop', arguments: {} })
    expect(notices).toHaveLength(2)
  })

  it('refuses a mailBytes that is not a non-negative integer', async () => {
    const mailbox = createMailbox()
    await expect(connect(posting(mailbox), { mailbox, mailBytes: -1 })).rejects.toThrow(
      'createMcpServer: options.mailBytes: must be a non-negative integer (bytes of mail a result holds; 0: never fold)',
    )
    await expect(connect(posting(mailbox), { mailbox: {} as Mailbox })).rejects.toThrow(
      'createMcpServer: options.mailbox: must be a mailbox (createMailbox, or MailboxToken of a kernel)',
    )
  })

  it('without a read-back (no tool that reads mail composed), says mail waits and names no tool', async () => {
    const mailbox = createMailbox()
    const { client } = await connect(posting(mailbox), { sessionId: 'm9', mailbox, mailBytes: 300 })
    const notices: unknown[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void notices.push(n.params))
    const first = texts(await client.callTool({ name: 'post', arguments: { count: 5, size: 100 } }))
    expect(first.at(-1)).toBe('[more mail waits than one result holds]')
    mailbox.source('m9', 'process:p1').push(1)
    await waitFor(() => notices.length === 1, 5000, 'the notice')
    expect(notices[0]).toMatchObject({
      data: '[mail waiting from process:p1] it comes with the next tool result of this session',
    })
  })
})
