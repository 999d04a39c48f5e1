// The MCP client of each revision, behind one face, so a test of `toolvisor mcp` runs in both eras
// (issue 30: the existing MCP tests pass in 2025-11-25 and in 2026-07-28): the v1 SDK's client,
// which speaks 2025-11-25 as Claude Code and Codex embed it, and the v2 SDK's pinned to 2026-07-28.
import { Client as ModernClient } from '@modelcontextprotocol/client'
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'

/** The two revisions a client may speak. */
export type Era = '2025-11-25' | '2026-07-28'
export const ERAS: readonly Era[] = ['2025-11-25', '2026-07-28']

/** What the tests ask of a client, whichever revision it speaks. */
export interface EraClient {
  readonly era: Era
  listTools(): Promise<{
    tools: Array<{
      name: string
      description?: string | undefined
      inputSchema: { properties?: Record<string, object> | undefined }
    }>
  }>
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    options?: {
      signal?: AbortSignal
      onprogress?: (progress: { progress: number; message?: string | undefined }) => void
    },
  ): Promise<{ content: unknown[]; isError?: boolean } & Record<string, unknown>>
  getServerCapabilities(): { tools?: unknown } | undefined
  /** A request every server answers at once: `ping` (2025), `server/discover` (2026, which has no ping). */
  alive(): Promise<unknown>
  /**
   * Hears when mail waits between results: the logging notice's text (2025), or the URI of the
   * resource `toolvisor://mail` whose listen stream was told (2026).
   */
  watchMail(onNotice: (said: string) => void): Promise<void>
  /** Resolves at the next `tools/list_changed` (2025: a notification; 2026: through listen). */
  nextToolsChange(): Promise<void>
  close(): Promise<void>
}

/** The stdio transport's options. */
export interface StdioOptions {
  readonly command: string
  readonly args: string[]
  readonly env: Record<string, string>
  readonly stderr: 'pipe'
}

/** A client of `era` on a stdio server; its transport's stderr is handed to `onStderr`. */
export async function stdioClient(
  era: Era,
  options: StdioOptions,
  onStderr: (chunk: Buffer) => void,
): Promise<{ client: EraClient; pid: () => number | undefined }> {
  const changes: Array<() => void> = []
  const told = (): void => {
    for (const resolve of changes.splice(0)) resolve()
  }
  if (era === '2025-11-25') {
    const transport = new StdioClientTransport(options)
    transport.stderr?.on('data', onStderr)
    const client = new Client({ name: 'toolvisor-test', version: '0.0.0' })
    client.setNotificationHandler(ToolListChangedNotificationSchema, told)
    await client.connect(transport)
    return {
      pid: () => transport.pid ?? undefined,
      client: {
        era,
        listTools: () => client.listTools(),
        callTool: (params, call) =>
          client.callTool(params, undefined, call) as ReturnType<EraClient['callTool']>,
        getServerCapabilities: () => client.getServerCapabilities(),
        alive: () => client.ping(),
        watchMail: async (onNotice) => {
          client.setNotificationHandler(LoggingMessageNotificationSchema, (n) =>
            onNotice(String(n.params.data)),
          )
        },
        nextToolsChange: () => new Promise((resolve) => changes.push(resolve)),
        close: () => client.close(),
      },
    }
  }
  const transport = new ModernStdio(options)
  transport.stderr?.on('data', onStderr)
  const client = new ModernClient(
    { name: 'toolvisor-test', version: '0.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      listChanged: { tools: { onChanged: told, debounceMs: 0 } },
    },
  )
  await client.connect(transport)
  if (client.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate 2026-07-28')
  return {
    pid: () => transport.pid ?? undefined,
    client: {
      era,
      listTools: () => client.listTools() as ReturnType<EraClient['listTools']>,
      callTool: (params, call) => client.callTool(params, call) as ReturnType<EraClient['callTool']>,
      getServerCapabilities: () => client.getServerCapabilities(),
      alive: () => client.discover(),
      watchMail: async (onNotice) => {
        client.setNotificationHandler('notifications/resources/updated', (n) => onNotice(n.params.uri))
        await client.listen({ resourceSubscriptions: ['toolvisor://mail'] })
      },
      nextToolsChange: () => new Promise((resolve) => changes.push(resolve)),
      close: () => client.close(),
    },
  }
}
