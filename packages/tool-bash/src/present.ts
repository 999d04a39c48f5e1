/**
 * Seed 001's UI presentation of the bash tools (`presentCall`/`presentResult`): a foreground
 * `bash` is a terminal card titled with the exact command; a background start, `bash_output` and
 * `bash_kill` are generic cards with task-scoped titles. Pure and display-only (they also run on
 * logged arguments): any argument shape, malformed or older, gets a generic card, never a throw.
 */
import type { CallCard, GenericCard, ResultCard, ToolAnnotations, ToolResult } from '@toolvisor/toolbox'

const field = (args: unknown, key: string): unknown =>
  typeof args === 'object' && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)[key]
    : undefined

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined

/** A card for arguments no presenter understands: the tool's name and the input as it came. */
function fallback(title: string, args: unknown): GenericCard {
  return { card: 'generic', title, kind: 'execute', rawInput: args }
}

/** A `bash` call: terminal in the foreground, generic in the background (it returns a task id). */
export function presentBashCall(args: unknown): CallCard {
  const command = text(field(args, 'command'))
  if (command === undefined) return fallback('bash', args)
  const description = text(field(args, 'description'))
  if (field(args, 'run_in_background') === true) {
    return {
      card: 'generic',
      title: command,
      kind: 'execute',
      rawInput: command,
      content: description === undefined ? [] : [description],
    }
  }
  const cwd = text(field(args, 'workdir'))
  return {
    card: 'terminal',
    title: command,
    ...(description !== undefined ? { description } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
  }
}

const EXIT_LINE = /\n?\[(?:exit code: -?\d+|killed by signal: [A-Z0-9]+)\]$/

/**
 * A `bash` result: a foreground run is a terminal card with its raw output and parsed exit code
 * or signal (the exit marker leaves the output: the card shows it as its pill); an error (a failed
 * start, an abort, a refusal) and a background start are generic, with no exit pill.
 */
export function presentBashResult(args: unknown, result: ToolResult): ResultCard {
  const command = text(field(args, 'command'))
  const body = result.content.map((item) => item.text).join('\n')
  if (command === undefined || result.isError || field(args, 'run_in_background') === true) {
    return { card: 'generic', title: command ?? 'bash', kind: 'execute', content: [body] }
  }
  const code = result.meta?.exitCode
  const signal = result.meta?.signal
  return {
    card: 'terminal',
    title: command,
    output: body.replace(EXIT_LINE, ''),
    ...(typeof code === 'number' ? { exitCode: code } : {}),
    ...(typeof signal === 'string' ? { signal } : {}),
  }
}

/** `bash_output`/`bash_kill`: a generic card with a task-scoped title and the task id as raw input. */
export function presentTaskCall(action: 'Read output from' | 'Kill', args: unknown): GenericCard {
  const id = text(field(args, 'task_id'))
  const kind = action === 'Kill' ? 'delete' : 'read'
  if (id === undefined) return { card: 'generic', title: `${action} background task`, kind, rawInput: args }
  return { card: 'generic', title: `${action} background task ${id}`, kind, rawInput: id }
}

/** The result of `bash_output`/`bash_kill`: the call's card with the answer as its content. */
export function presentTaskResult(
  action: 'Read output from' | 'Kill',
  args: unknown,
  result: ToolResult,
): GenericCard {
  return { ...presentTaskCall(action, args), content: result.content.map((item) => item.text) }
}

/**
 * MCP annotations of every profile's tools, by name: true for each (a command may write, delete
 * and reach the network in every mode but read-only's files; a read changes nothing outside).
 */
export const ANNOTATIONS: Readonly<Record<string, ToolAnnotations>> = {
  bash: { title: 'Run a shell command', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  run: { title: 'Run a shell command', readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  bash_output: { title: 'Read background task output', readOnlyHint: true, openWorldHint: false },
  status: { title: 'Read a task status', readOnlyHint: true, openWorldHint: false },
  bash_kill: { title: 'Kill a background task', ...stops() },
  kill_shell: { title: 'Kill a background shell', ...stops() },
  kill: { title: 'Kill a task', ...stops() },
  // Keystrokes reach whatever the program does with them (a shell runs a typed command).
  write_stdin: {
    title: 'Type into a terminal task',
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: true,
  },
  send: {
    title: 'Type into a terminal task',
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: true,
  },
  exec_command: {
    title: 'Run a shell command',
    readOnlyHint: false,
    destructiveHint: true,
    openWorldHint: true,
  },
  bash_sandbox_mode: {
    title: "Lower this session's sandbox mode",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
}

function stops(): ToolAnnotations {
  return { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
}
