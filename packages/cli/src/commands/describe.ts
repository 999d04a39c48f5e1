import { statSync } from 'node:fs'
import { resolve } from 'node:path'
import { visibleJson, visibleLine } from '@toolvisor/answers'
import type { LoadedTool, Tool, ToolRegistry } from '@toolvisor/toolbox'
import { compose } from '../internal/compose.js'
import { configFileOf, configOf, parseLine, usageOf } from '../internal/flags.js'
import { entryOf } from '../internal/toolboxes.js'
import { human, type Io } from '../output.js'

/** `toolvisor describe --help`. */
export const DESCRIBE_USAGE = usageOf(
  'describe',
  `usage: toolvisor describe TOOL [--json] [flags]

Loads one tool (runs TOOL describe) and prints what the model will see: each tool's name, its
description, its arguments and how they reach the tool. A tool that fails to load prints the
reason (path, field, what was expected) and exits 2.`,
)

/** `toolvisor describe TOOL [--json]`. */
export async function describeCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseLine('describe', argv, DESCRIBE_USAGE)
  if (values.help) {
    io.out(`${DESCRIBE_USAGE}\n`)
    return 0
  }
  if (positionals.length !== 1) {
    io.err(`toolvisor describe: expected one TOOL path, got ${positionals.length}\n\n${DESCRIBE_USAGE}\n`)
    return 2
  }
  const path = positionals[0]!
  if (isDirectory(path)) {
    io.err(
      `toolvisor describe: ${resolve(path)} is a directory; describe takes one tool. ` +
        `To load every tool of a toolbox, run: toolvisor check --toolbox ${path}\n`,
    )
    return 2
  }
  const config = configOf('describe', values)
  const composed = await compose(config, {
    loadToolboxes: false,
    configFile: configFileOf(values),
  })
  try {
    // A LoadingError reaches main(), which prints it and exits 2.
    const loaded = await composed.binary.load(path, entryOf(config.toolboxes, path))
    // As it is served: its own tools, then what its mode brings along (a service's slug.send).
    const tools = [...composed.binary.tools(loaded), ...composed.binary.companions(loaded)]
    // JSON keeps JSON's own escapes (and the ones JSON leaves raw: bidi, zero-width, tags).
    if (values.json) io.out(`${visibleJson(describeDocument(loaded, tools, composed.tools), 2)}\n`)
    else io.out(`${describeLines(loaded, tools, composed.tools).join('\n')}\n`)
    return 0
  } finally {
    await composed.kernel.dispose()
  }
}

/**
 * A model-facing tool's arguments: the declared ones of the tool or its command, each with its
 * mode; a companion's (a service's `slug.send`) from the schema it publishes.
 */
function argumentLines(spec: LoadedTool['spec'], tool: Tool): string[] {
  const own =
    tool.name === spec.slug ? spec.args : spec.commands.find((c) => c.internalName === tool.name)?.args
  if (own !== undefined) {
    if (own.length === 0) return ['  no arguments']
    return own.map(
      (arg) =>
        `  ${visibleLine(arg.name)}  ${arg.backingType}${arg.required ? '' : ', optional'}, ${arg.mode}: ${human(arg.description, '    ')}`,
    )
  }
  const lines = schemaLines(tool.inputSchema as Schema, '  ')
  return lines.length === 0 ? ['  no arguments'] : lines
}

/** The part of a JSON Schema `describe` shows: an object's properties, a type, an enum. */
interface Schema {
  readonly type?: unknown
  readonly enum?: unknown
  readonly description?: unknown
  readonly properties?: Record<string, Schema>
  readonly required?: unknown
}

/**
 * An object schema's properties, one line each (`name  type[, optional][: description]`), an
 * object's own properties indented below it, so the event a companion sends reads whole.
 */
function schemaLines(schema: Schema, indent: string): string[] {
  const required = Array.isArray(schema.required) ? schema.required : []
  return Object.entries(schema.properties ?? {}).flatMap(([name, property]) => {
    const type = Array.isArray(property.enum)
      ? property.enum.map((value) => visibleLine(JSON.stringify(value))).join(' | ')
      : typeof property.type === 'string'
        ? property.type
        : 'any'
    const description =
      typeof property.description === 'string' ? `: ${human(property.description, `${indent}  `)}` : ''
    const line = `${indent}${visibleLine(name)}  ${type}${required.includes(name) ? '' : ', optional'}${description}`
    return [line, ...schemaLines(property, `${indent}  `)]
  })
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** How the tool runs, for both renderings. */
function runtimeOf({ spec, prepared }: LoadedTool) {
  return {
    ...(prepared.sandbox
      ? { sandbox: { mechanism: prepared.sandbox.mechanism.name, ...prepared.sandbox.policy } }
      : {}),
    ...(prepared.runAs ? { runAs: prepared.runAs.target } : {}),
    ...(spec.runtime.envdir ? { envdir: spec.runtime.envdir } : {}),
    ...(prepared.rundir ? { rundir: prepared.rundir } : {}),
    timeout: spec.runtime.timeout,
    cancel: 'signal' in spec.runtime.cancel ? spec.runtime.cancel.signal : 'send',
    ...(spec.process.mode === 'service' ? { onExit: spec.runtime.onExit, digest: spec.process.digest } : {}),
  }
}

/** `--json`: one document. */
function describeDocument(loaded: LoadedTool, tools: readonly Tool[], registry: ToolRegistry) {
  const { spec } = loaded
  return {
    tool: spec.path,
    protocol: spec.protocol,
    mode: spec.process.mode,
    framing: spec.process.output.framing,
    check: spec.check,
    help: spec.help,
    tools: tools.map((tool) => ({
      name: tool.name,
      safeName: registry.safeName(tool.name),
      description: tool.description,
      inputSchema: tool.inputSchema,
    })),
    warnings: spec.warnings,
    runtime: runtimeOf(loaded),
  }
}

/**
 * The text rendering: each model-facing tool with its arguments, then how it runs. Everything from
 * the describe document is the tool's own text: escaped, and a description's later lines indented
 * under it, so it cannot print a line that passes for toolvisor's (`sandbox: ...`, `warning: ...`).
 */
function describeLines(
  { spec, prepared }: LoadedTool,
  tools: readonly Tool[],
  registry: ToolRegistry,
): string[] {
  const lines: string[] = []
  const kind = `v${spec.protocol} ${spec.process.mode}, ${spec.process.output.framing === 'chunks' ? 'stdout as is' : `${spec.process.output.framing} events`}`
  lines.push(`${visibleLine(spec.path)} (${kind}${spec.check ? ', check' : ''}${spec.help ? ', help' : ''})`)
  for (const tool of tools) {
    lines.push('', visibleLine(registry.safeName(tool.name)), `  ${human(tool.description, '  ')}`)
    lines.push(...argumentLines(spec, tool))
  }
  if (spec.process.mode === 'service') {
    const digest = spec.process.digest
    const per = digest.per === 'round' ? 'round' : `${digest.per} ${digest.n}`
    lines.push('', `service: on_exit ${spec.runtime.onExit}, digest ${per}`)
  }
  if (prepared.sandbox) {
    const { policy, mechanism } = prepared.sandbox
    lines.push(
      '',
      `sandbox: ${mechanism.name}; read ${visibleJson(policy.read)}, write ${visibleJson(policy.write)}, net ${typeof policy.net === 'string' ? policy.net : `allow ${visibleJson(policy.net.allow)}, deny ${visibleJson(policy.net.deny)}, publish ${JSON.stringify(policy.net.publish)}`}, tmp ${policy.tmp}`,
    )
  }
  if (prepared.runAs) {
    const { user, group } = prepared.runAs.target
    lines.push(`run as: ${visibleLine(user)}${group ? `:${visibleLine(group)}` : ''}`)
  }
  for (const warning of spec.warnings) lines.push(`warning: ${human(warning)}`)
  return lines
}
