/**
 * The registry's guidance for the model (seed 001's `tool:bash` section) over MCP: the
 * `instructions` of `initialize`, which a client adds to its system prompt, and one prompt per
 * section for a client that lists prompts (`prompts/list`, `prompts/get`).
 */
import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server'
import type { Guidance, ToolRegistry } from '@toolvisor/toolbox'

/** The sections of `tools`, by order; none for a registry without guidance. */
export function guidanceOf(tools: ToolRegistry): readonly Guidance[] {
  return tools.guidance?.() ?? []
}

/** The `instructions` text: every section, in order, a blank line between; undefined for none. */
export function instructionsOf(sections: readonly Guidance[]): string | undefined {
  return sections.length === 0 ? undefined : sections.map((section) => section.text).join('\n\n')
}

/**
 * `prompts/list` (each section, by name, with its description) and `prompts/get` (the section as
 * one user message); an unknown name is `InvalidParams` naming the prompts there are. The list is
 * read at each request (the capability itself is declared when the server is made).
 */
export function servePrompts(server: Server, tools: ToolRegistry): void {
  server.setRequestHandler('prompts/list', async () => ({
    prompts: guidanceOf(tools).map(({ name, description }) => ({ name, description })),
  }))
  server.setRequestHandler('prompts/get', async (request) => {
    const sections = guidanceOf(tools)
    const section = sections.find((each) => each.name === request.params.name)
    if (section === undefined) {
      const names = sections.map((each) => `"${each.name}"`).join(', ') || 'none'
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `no prompt named ${JSON.stringify(request.params.name).slice(0, 80)}; the prompts are: ${names}`,
      )
    }
    return {
      description: section.description,
      messages: [{ role: 'user' as const, content: { type: 'text' as const, text: section.text } }],
    }
  })
}
