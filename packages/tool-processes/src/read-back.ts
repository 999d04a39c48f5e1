import type { ReadBack, ReadBackRequest } from '@toolvisor/answers'

/** The tool's name, as the model calls it. */
const TOOL = 'processes'

/**
 * How the toolbox's answers, and the surfaces' (mail folded into a result, an MCP task's end),
 * tell the model to read back what they left out: as `processes` calls. The one place outside
 * this tool's own answers that writes its syntax.
 */
export const processesReadBack: ReadBack = {
  call: (request) => `${TOOL} ${argsOf(request)}`,
  args: argsOf,
}

/** The call's arguments as the tool reads them, in its order (stdout and offset 0 are its defaults, left out). */
function argsOf(request: ReadBackRequest): string {
  if (request.command !== 'output') return JSON.stringify(request)
  const { command, process, stream, offset } = request
  return JSON.stringify({
    command,
    process,
    ...(stream === 'stderr' ? { stream } : {}),
    ...(offset !== undefined && offset > 0 ? { offset } : {}),
  })
}
