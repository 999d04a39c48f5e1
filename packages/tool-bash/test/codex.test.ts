// The codex profile (issue 31): Codex's unified exec surface, exec_command and write_stdin, with
// its bounds and its answer's shape, over the same tasks, launcher and sandbox as every profile.
import { describe, expect, it } from 'vitest'
import { compose } from './helpers.js'

const CODEX = { profile: 'codex' }

/** The parts of a Codex answer. */
function parsed(text: string) {
  const [head, ...rest] = text.split('\nOutput:\n')
  const lines = head!.split('\n')
  return {
    chunk: lines[0],
    wall: Number(/^Wall time: ([\d.]+) seconds$/.exec(lines[1]!)?.[1]),
    exited: /^Process exited with code (-?\d+)$/.exec(lines[2]!)?.[1],
    running: /^Process running with session ID (\d+)$/.exec(lines[2]!)?.[1],
    tokens: Number(/^Original token count: (\d+)$/.exec(lines[3]!)?.[1]),
    output: rest.join('\nOutput:\n'),
  }
}

describe('profile codex', () => {
  it("serves Codex's two tools and nothing else of bash's", async () => {
    const { tools } = await compose(CODEX)
    const names = tools.list().map((tool) => tool.name)
    expect(names).toEqual(expect.arrayContaining(['exec_command', 'write_stdin']))
    expect(names).not.toContain('bash')
  })

  it('answers a command that ended within the yield with its output and exit code', async () => {
    const { call } = await compose(CODEX)
    const done = await call('exec_command', { cmd: 'echo out; echo err >&2; exit 3' })
    const answer = parsed(done.text)
    expect(done.isError).toBe(false)
    expect(answer.chunk).toMatch(/^Chunk ID: [0-9a-f]{6}$/)
    expect(answer.exited).toBe('3')
    expect(answer.output).toBe('out\nerr\n')
    expect(answer.tokens).toBe(2)
    expect(answer.wall).toBeLessThan(5)
  })

  it('gives a session id after the yield, and write_stdin drives a tty session to its end', async () => {
    const { call } = await compose(CODEX)
    const started = parsed(
      (
        await call('exec_command', {
          cmd: 'read -r -p "name? " n; echo "hi $n"',
          tty: true,
          yield_time_ms: 300,
        })
      ).text,
    )
    expect(started.running).toMatch(/^\d{4,5}$/)
    expect(Number(started.running)).toBeGreaterThanOrEqual(1000)
    expect(started.output).toBe('name? ')
    const id = Number(started.running)
    const answered = parsed(
      (await call('write_stdin', { session_id: id, chars: 'codex\n', yield_time_ms: 2000 })).text,
    )
    expect(answered.exited).toBe('0')
    expect(answered.output).toBe('codex\nhi codex\n')
  })

  it('refuses chars to a session without a tty, as Codex does; an empty poll reads it', async () => {
    const { call } = await compose(CODEX)
    const started = parsed(
      (await call('exec_command', { cmd: 'sleep 0.5; echo late', yield_time_ms: 250 })).text,
    )
    const id = Number(started.running)
    const refused = await call('write_stdin', { session_id: id, chars: 'x' })
    expect(refused).toMatchObject({
      isError: true,
      text: 'Error: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
    })
    const polled = parsed((await call('write_stdin', { session_id: id, chars: '' })).text)
    expect(polled.exited).toBe('0')
    expect(polled.output).toBe('late\n')
  })

  it('cuts output to max_output_tokens, saying how much there was', async () => {
    const { call } = await compose(CODEX)
    const big = parsed((await call('exec_command', { cmd: 'seq 1 20000', max_output_tokens: 100 })).text)
    expect(big.tokens).toBe(Math.ceil(108894 / 4))
    expect(big.output).toMatch(/^…\d+ tokens truncated…/)
    expect(big.output.endsWith('19999\n20000\n')).toBe(true)
    expect(big.output.length).toBeLessThan(500)
  })

  it("C-c through the tty stops the foreground program; another session's id is refused", async () => {
    const { call } = await compose(CODEX)
    const started = parsed(
      (await call('exec_command', { cmd: 'sleep 60', tty: true, yield_time_ms: 250 })).text,
    )
    const id = Number(started.running)
    expect((await call('write_stdin', { session_id: id, chars: 'x' }, 'bob')).isError).toBe(true)
    const stopped = parsed(
      (await call('write_stdin', { session_id: id, chars: '\u0003', yield_time_ms: 5000 })).text,
    )
    expect(stopped.exited).toBe('130')
  })
})
