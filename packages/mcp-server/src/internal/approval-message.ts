/**
 * The approval prompt's text (decision 0093): what the user reads before one call runs wider. Every
 * field comes from the model, so every field is escaped and shown whole: the justification on one
 * line, where and how it runs, the network names it may also reach (decision 0112) in a fence of
 * their own, then the command in a fence it cannot close, each of its lines numbered, its line
 * count stated. What the user approves is what runs.
 */

import { visibleLine } from '@toolvisor/answers'
import type { ApprovalRequest } from '@toolvisor/toolbox'

/** The prompt's last line: what an answer does. */
export const APPROVAL_FOOTER = 'Accept allows this one call only; nothing is remembered. Decline refuses it.'
/** How much of the justification the prompt shows: characters after escaping, an escape counting as one; the cut is said. */
export const JUSTIFICATION_CHARACTERS = 240
/** The widest row of the command, in characters after escaping; a longer line goes on in `+` rows. */
export const ROW_CHARACTERS = 120
/** Empty lines in a row from which the prompt says how many instead of showing each. */
const EMPTY_RUN = 3

/** The prompt for `request`. */
export function approvalMessage(request: ApprovalRequest): string {
  const lines = request.command.split('\n')
  const rows = commandRows(lines)
  const fence = fenceFor(rows)
  const names = request.network ?? []
  const reach = names.length > 0 ? ', and let it also reach the network names below' : ''
  return [
    `Allow ${visibleLine(request.tool)} to run this exact command once under the "${visibleLine(request.mode)}" sandbox mode${reach}?`,
    '',
    `Justification: ${justificationLine(request.justification)}`,
    ...(request.workdir === undefined
      ? []
      : [`Working directory (workdir): ${visibleLine(request.workdir)}`]),
    `In the background (run_in_background): ${request.background ? 'yes: it goes on running after this call answers' : 'no'}`,
    ...networkBlock(names),
    '',
    `The command, ${lines.length} ${lines.length === 1 ? 'line' : 'lines'}:`,
    fence,
    ...rows,
    fence,
    '',
    APPROVAL_FOOTER,
  ].join('\n')
}

/**
 * The names the command may also reach (decision 0112), one per numbered row in a fence of their
 * own, escaped as the command is: a name cannot pass for a line of the prompt, and none is hidden
 * or cut. Nothing when the question is about the mode alone.
 */
function networkBlock(names: readonly string[]): string[] {
  if (names.length === 0) return []
  const rows = commandRows(names)
  const fence = fenceFor(rows)
  const count = `${names.length} ${names.length === 1 ? 'name' : 'names'}`
  return ['', `The network names it may also reach for this call, ${count}:`, fence, ...rows, fence]
}

/** The justification, escaped onto one line and cut at `JUSTIFICATION_CHARACTERS`, the cut said. */
function justificationLine(text: string): string {
  const units = unitsOf(visibleLine(text))
  if (units.length <= JUSTIFICATION_CHARACTERS) return units.join('')
  const total = [...text].length
  return `${units.slice(0, JUSTIFICATION_CHARACTERS).join('')}… (cut here: the justification has ${total} characters)`
}

/**
 * The rows of a command's lines (or of the network names): each line escaped and numbered
 * (`12 | text`), a line longer than a row continued in `+` rows, and a run of empty lines said in
 * one `~` row. No row starts with the model's own text, so nothing in it can pass for a row, a
 * marker or the fence.
 */
function commandRows(lines: readonly string[]): string[] {
  const width = String(lines.length).length
  const blank = ' '.repeat(width)
  const rows: string[] = []
  for (let i = 0; i < lines.length; ) {
    const run = emptyRun(lines, i)
    if (run >= EMPTY_RUN) {
      rows.push(`${blank} ~ (lines ${i + 1} to ${i + run} are empty)`)
      i += run
      continue
    }
    const [first = '', ...rest] = pieces(visibleLine(lines[i]!))
    rows.push(`${String(i + 1).padStart(width)} |${first === '' ? '' : ` ${first}`}`)
    for (const piece of rest) rows.push(`${blank} + ${piece}`)
    i += 1
  }
  return rows
}

/** How many empty lines start at `from`. */
function emptyRun(lines: readonly string[], from: number): number {
  let end = from
  while (end < lines.length && lines[end] === '') end += 1
  return end - from
}

/** An escape (`\u001b`, `\u{e0041}`, `\n`) is one unit: a cut never splits it. */
const UNIT = /\\u\{[0-9a-f]+\}|\\u[0-9a-f]{4}|\\n|[\s\S]/gu

function unitsOf(text: string): string[] {
  return text.match(UNIT) ?? []
}

/** `text` in pieces of at most `ROW_CHARACTERS` characters (the first is '' for an empty line). */
function pieces(text: string): string[] {
  const units = unitsOf(text)
  if (units.length === 0) return ['']
  const out: string[] = []
  let piece = ''
  for (const unit of units) {
    if (piece.length + unit.length > ROW_CHARACTERS && piece !== '') {
      out.push(piece)
      piece = ''
    }
    piece += unit
  }
  out.push(piece)
  return out
}

/** A fence longer than any run of backticks in the rows (at least three): the command cannot close it. */
function fenceFor(rows: readonly string[]): string {
  let longest = 0
  for (const row of rows) for (const run of row.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  return '`'.repeat(Math.max(3, longest + 1))
}
