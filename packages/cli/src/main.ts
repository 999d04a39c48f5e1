import { visibleText } from '@toolvisor/answers'
import { callCommand } from './commands/call.js'
import { checkCommand } from './commands/check.js'
import { demoCommand } from './commands/demo.js'
import { describeCommand } from './commands/describe.js'
import { mcpCommand } from './commands/mcp.js'
import { serveCommand } from './commands/serve.js'
import { CliError } from './errors.js'
import { VERSION } from './internal/version.js'
import { explain, type Io, processIo } from './output.js'

export const USAGE = `usage: toolvisor COMMAND [...]

Runs an AI agent's tools as processes: one-shot commands, streams of typed events, long-lived
services; each under a declared runtime, owned by the session that started it.

commands:
  describe TOOL [--json]         what the model will see of one tool
  call TOOL [ARGS_JSON]          run one call and print the result
  mcp --toolbox DIR              serve toolboxes to an MCP client over stdio
  serve --listen ADDR            serve them over Streamable HTTP, processes outliving clients
  check [--probe] [--json]       does the configuration load; are its tools usable here, now
  demo                           a guided run on examples/tools

  toolvisor COMMAND --help       help for one command
  toolvisor --version            the version`

const commands: Record<string, (argv: readonly string[], io: Io) => Promise<number>> = {
  describe: describeCommand,
  call: callCommand,
  mcp: mcpCommand,
  serve: serveCommand,
  check: checkCommand,
  demo: demoCommand,
}

/** Runs the CLI; resolves with the exit code. Usage and configuration errors are exit 2. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${USAGE}\n`)
    return name === undefined ? 2 : 0
  }
  if (name === '--version' || name === '-v') {
    io.out(`${VERSION}\n`)
    return 0
  }
  const command = commands[name]
  if (!command) {
    io.err(`toolvisor: unknown command ${visibleText(JSON.stringify(name))}\n\n${USAGE}\n`)
    return 2
  }
  try {
    return await command(rest, io)
  } catch (error) {
    if (CliError.is(error)) {
      // A usage or loading error quotes paths, flags and describe documents: shown, not acted on.
      io.err(`toolvisor ${name}: ${visibleText(error.message)}\n`)
      return 2
    }
    io.err(`toolvisor ${name}: ${visibleText(explain(error))}\n`)
    return 2
  }
}
