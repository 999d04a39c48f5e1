import { compose } from '../compose.js'
import { configFrom, parse, RUNTIME_FLAGS, RUNTIME_FLAGS_HELP } from '../flags.js'
import type { Io } from '../output.js'

export const DESCRIBE_USAGE = `usage: toolvisor describe TOOL [--json] [flags]

Loads one tool (runs TOOL describe) and prints what the model will see: each tool's name, its
description, its arguments and how they reach the tool. A tool that fails to load prints the
reason (path, field, what was expected) and exits 2.

  --json               print one JSON document instead of text
${RUNTIME_FLAGS_HELP}`

/** `toolvisor describe TOOL [--json]`. */
export async function describeCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...RUNTIME_FLAGS, json: { type: 'boolean' } }, DESCRIBE_USAGE)
  if (values.help) {
    io.out(`${DESCRIBE_USAGE}\n`)
    return 0
  }
  if (positionals.length !== 1) {
    io.err(`toolvisor describe: expected one TOOL path, got ${positionals.length}\n\n${DESCRIBE_USAGE}\n`)
    return 2
  }
  const composed = await compose(configFrom(values), { loadToolboxes: false })
  try {
    // A LoadingError reaches main(), which prints it and exits 2.
    const loaded = await composed.binary.load(positionals[0]!)
    const tools = composed.binary.tools(loaded)
    const { spec, prepared } = loaded
    const runtime = {
      ...(prepared.sandbox
        ? { sandbox: { mechanism: prepared.sandbox.mechanism.name, ...prepared.sandbox.policy } }
        : {}),
      ...(prepared.runAs ? { runAs: prepared.runAs.target } : {}),
      ...(spec.runtime.envdir ? { envdir: spec.runtime.envdir } : {}),
      ...(prepared.rundir ? { rundir: prepared.rundir } : {}),
      timeout: spec.runtime.timeout,
      cancel: 'signal' in spec.runtime.cancel ? spec.runtime.cancel.signal : 'send',
    }
    if (values.json) {
      const document = {
        tool: spec.path,
        protocol: spec.protocol,
        mode: spec.process.mode,
        framing: spec.process.output.framing,
        check: spec.check,
        help: spec.help,
        tools: tools.map((tool) => ({
          name: tool.name,
          safeName: composed.tools.safeName(tool.name),
          description: tool.description,
          inputSchema: tool.inputSchema,
        })),
        warnings: spec.warnings,
        runtime,
      }
      io.out(`${JSON.stringify(document, null, 2)}\n`)
      return 0
    }
    const lines: string[] = []
    const kind = `v${spec.protocol} ${spec.process.mode}, ${spec.process.output.framing === 'chunks' ? 'stdout as is' : `${spec.process.output.framing} events`}`
    lines.push(`${spec.path} (${kind}${spec.check ? ', check' : ''}${spec.help ? ', help' : ''})`)
    for (const tool of tools) {
      lines.push('', `${composed.tools.safeName(tool.name)}`, `  ${tool.description}`)
      const args = spec.commands.find((c) => c.internalName === tool.name)?.args ?? spec.args
      if (args.length === 0) lines.push('  no arguments')
      for (const arg of args) {
        lines.push(
          `  ${arg.name}  ${arg.backingType}${arg.required ? '' : ', optional'}, ${arg.mode}: ${arg.description}`,
        )
      }
    }
    if (prepared.sandbox) {
      const { policy, mechanism } = prepared.sandbox
      lines.push(
        '',
        `sandbox: ${mechanism.name}; read ${JSON.stringify(policy.read)}, write ${JSON.stringify(policy.write)}, net ${policy.net}, tmp ${policy.tmp}`,
      )
    }
    if (prepared.runAs)
      lines.push(
        `run as: ${prepared.runAs.target.user}${prepared.runAs.target.group ? `:${prepared.runAs.target.group}` : ''}`,
      )
    for (const warning of spec.warnings) lines.push(`warning: ${warning}`)
    io.out(`${lines.join('\n')}\n`)
    return 0
  } finally {
    await composed.kernel.dispose()
  }
}
