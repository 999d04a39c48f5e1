/**
 * `write_stdin` of the dsh and toolnexus profiles (issue 31): keystrokes into a background task on
 * a terminal, then a bounded wait for the answer, read as the new output or as the screen. Named as
 * Codex and deepseek-harness's Codex mode name it (seed 001's project ships that surface).
 */

import type { Keystroke } from '@toolvisor/terminal'
import type { ArgsOf, Tool, ToolCallContext, ToolResult } from '@toolvisor/toolbox'
import { anyString, cells, flag, keyNames, milliseconds, taskId } from '../internal/args.js'
import { outputText, spills, statusLine } from '../internal/render.js'
import { answer, type BashServices, readTask } from './common.js'
import { screenAnswer, terminalTask, typeAndWait, untilMarker } from './terminal.js'
import { bashTool } from './tool.js'

/** How long `write_stdin` waits for an answer when the call says nothing, in ms. */
export const DEFAULT_INPUT_WAIT_MS = 2_000

/** The fields of `write_stdin` besides the task id. */
function inputFields(maxWaitMs: number) {
  return {
    text: anyString('Text to type, as is (UTF-8). End a line with the Enter key, not a newline.'),
    keys: keyNames(
      'Keys to press after the text, in order, by name: ["Enter"], ["C-c"], ["Escape"]. Text goes in `text`.',
    ),
    until: anyString('Stop waiting as soon as this text shows (a prompt such as ">>> "), matched literally.'),
    wait_ms: milliseconds(
      `The most to wait for the answer, in ms (default ${DEFAULT_INPUT_WAIT_MS}, at most ${maxWaitMs}).`,
    ),
    screen: flag(
      'Answer with the screen a person would see (rows, cursor, title) instead of the new output.',
    ),
    columns: cells('Resize the terminal to this width first (with rows).'),
    rows: cells('Resize the terminal to this height first (with columns).'),
  }
}

type InputArgs = ArgsOf<ReturnType<typeof inputFields>>

function description(maxWaitMs: number, readWith = '`bash_output`'): string {
  return (
    'Type into a background task started with `tty: true`, then wait for it to answer: `text` is typed as is, ' +
    'then `keys` are pressed in order (Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, ' +
    'PageDown, F1-F12, C-a..C-z such as C-c or C-d, M-x). It answers with what the program showed since your ' +
    `previous read (as ${readWith}), or with the screen (\`screen: true\`), then the task status. The wait ` +
    'ends when the output is quiet for a moment, when `until` shows, when the task ends, or after `wait_ms` ' +
    `(default ${DEFAULT_INPUT_WAIT_MS}, at most ${maxWaitMs}). With nothing to type it only waits and reads; ` +
    '`columns` and `rows` resize the terminal first.'
  )
}

/** Types a call's input into task `task`, waits, and answers with the new output or the screen. */
async function typeInto(
  services: BashServices,
  task: string,
  args: InputArgs,
  ctx: ToolCallContext,
): Promise<ToolResult> {
  const session = terminalTask(services, task, ctx)
  if ((args.columns === undefined) !== (args.rows === undefined))
    return answer('invalid columns: a resize gives both columns and rows', true)
  const input: Keystroke[] = [
    ...(args.text !== undefined && args.text.length > 0 ? [{ text: args.text }] : []),
    ...(args.keys ?? []).map((key) => ({ key })),
  ]
  const maxWaitMs = services.options.maxWaitSeconds * 1000
  const call = {
    input,
    size: args.columns !== undefined ? { columns: args.columns, rows: args.rows! } : undefined,
    waitMs: Math.min(args.wait_ms ?? DEFAULT_INPUT_WAIT_MS, maxWaitMs),
    until: args.until !== undefined && args.until.length > 0 ? args.until : undefined,
  }
  const settled = await typeAndWait(session, call, ctx)
  const marker = untilMarker(call, settled)
  if (args.screen === true) {
    const screen = await screenAnswer(services, session)
    const status = statusLine(services.tasks.get(task, ctx.sessionId))
    return answer([screen, marker, status].filter((line) => line.length > 0).join('\n'))
  }
  const read = readTask(services, task, ctx)
  const text = outputText(read, services.render)
  return answer(marker.length > 0 ? `${marker}\n${text}` : text, false, spills(read))
}

/** `write_stdin` of profile dsh: the task is `task_id`. */
export function dshWriteStdin(services: BashServices): Tool {
  const maxWaitMs = services.options.maxWaitSeconds * 1000
  return bashTool({
    name: 'write_stdin',
    description: description(maxWaitMs),
    fields: { task_id: taskId('The id `bash` returned for the background task.'), ...inputFields(maxWaitMs) },
    run: ({ task_id, ...args }, ctx) => typeInto(services, task_id, args, ctx),
  })
}

/** `write_stdin` of profile toolnexus: the shell is `id`. */
export function toolnexusWriteStdin(services: BashServices): Tool {
  const maxWaitMs = services.options.maxWaitSeconds * 1000
  return bashTool({
    name: 'write_stdin',
    description: description(maxWaitMs),
    fields: { id: taskId('The background shell id `bash` returned.'), ...inputFields(maxWaitMs) },
    run: ({ id, ...args }, ctx) => typeInto(services, id, args, ctx),
  })
}

/**
 * `send` of profile hyperhive: seed 002 names its tools by one verb (`run`, `status`, `kill`), so
 * the tool that types into a task is `send`; the task is `id`, as in its other tools.
 */
export function hyperhiveSend(services: BashServices): Tool {
  const maxWaitMs = services.options.maxWaitSeconds * 1000
  return bashTool({
    name: 'send',
    description: description(maxWaitMs, 'the previous `send`'),
    fields: { id: taskId('The task id from `run` (started with `tty: true`).'), ...inputFields(maxWaitMs) },
    run: ({ id, ...args }, ctx) => typeInto(services, id, args, ctx),
  })
}
