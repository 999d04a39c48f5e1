import type { ListToolsResult, Tool as McpTool } from '@modelcontextprotocol/server'
import type { TaskRegistry } from '@toolvisor/tasks'
import type { ToolRegistry } from '@toolvisor/toolbox'
import type { McpServerOptions } from '../server.js'
import { ToolAnnouncer } from './announcer.js'
import type { callHandler } from './call-handler.js'
import type { ProtocolEra } from './era.js'
import { guidanceOf, instructionsOf, servePrompts } from './guidance.js'
import type { Inflight } from './inflight.js'
import { serveTasks, TaskServer } from './task-requests.js'
import type { TaskAnswers } from './tasks.js'
import { serveTasksExtension, TASKS_EXTENSION } from './tasks-extension.js'

/**
 * The SDK server: tools (announced when the registry can), the mail when there is a mailbox (told
 * by a logging notice in 2025, a resource in 2026-07-28), tasks over the registry when there is
 * one (the 2025 tasks, or the 2026 Tasks extension), and the registry's guidance as `instructions`
 * and prompts when it has any.
 */
export function sdkServer(
  options: McpServerOptions,
  tools: ToolRegistry,
  tasks:
    | { readonly registry: TaskRegistry; readonly answers: TaskAnswers; readonly session: string }
    | undefined,
  era: ProtocolEra,
): TaskServer {
  const instructions = instructionsOf(guidanceOf(tools))
  const mail = options.mailbox !== undefined
  const capabilities = {
    tools: ToolAnnouncer.canAnnounce(tools) ? { listChanged: true } : {},
    ...(instructions !== undefined ? { prompts: {} } : {}),
    ...(mail && era === 'legacy' ? { logging: {} } : {}),
    ...(mail && era === 'modern' ? { resources: { subscribe: true } } : {}),
    ...(tasks && era === 'legacy'
      ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }
      : {}),
    ...(tasks && era === 'modern' ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
  }
  const server = new TaskServer(
    { name: options.name, version: options.version },
    { capabilities, ...(instructions !== undefined ? { instructions } : {}) },
  )
  if (tasks) {
    const served = {
      tasks: tasks.registry,
      answers: tasks.answers,
      session: tasks.session,
      readBack: options.readBack,
    }
    if (era === 'legacy') serveTasks(server, served)
    else serveTasksExtension(server, served)
  }
  if (instructions !== undefined) servePrompts(server, tools)
  return server
}

/** `tools/list` and `tools/call` on the SDK server; every call is tracked until it settles. */
export function serveTools(
  server: TaskServer,
  inflight: Inflight,
  handle: ReturnType<typeof callHandler>,
  listed: { readonly tools: ToolRegistry; readonly tasks: boolean },
  loaded: () => Promise<void>,
): void {
  server.setRequestHandler('tools/list', async () => {
    await loaded()
    return listTools(listed.tools, listed.tasks)
  })
  // A call of a tool that is not there yet waits for the first load too (a client that remembers
  // the tools from an earlier connection calls without listing): after it, an unknown tool is one.
  server.serveToolCalls(async (request, ctx) => {
    const { name } = request.params
    if (listed.tools.get(name) === undefined) await loaded()
    return inflight.track(handle(request, ctx), name)
  })
}

/**
 * Every tool under its provider-safe name, its description, its input schema as is and its
 * annotations (when it has any); with tasks, those that may run as one say so.
 */
function listTools(tools: ToolRegistry, tasks: boolean): ListToolsResult {
  const listed: McpTool[] = tools.list().map((tool) => ({
    name: tools.safeName(tool.name),
    description: tool.description,
    inputSchema: tool.inputSchema as McpTool['inputSchema'],
    ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
    ...(tasks && tool.taskSupport ? { execution: { taskSupport: tool.taskSupport } } : {}),
  }))
  return { tools: listed }
}
