import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { afterEach, expect } from 'vitest'
import { bin, tagged, tempDir } from './helpers.js'

const started: Array<{ child: ChildProcessWithoutNullStreams; tag: string }> = []
afterEach(async () => {
  for (const { child, tag } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    const deadline = Date.now() + 3000
    while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(tagged(tag), 'processes left running').toEqual([])
  }
})

/** A JSON-RPC message as `toolvisor mcp` wrote it. */
export interface Message {
  readonly id?: unknown
  readonly method?: string
  readonly result?: unknown
  readonly error?: unknown
}

/**
 * `toolvisor mcp ARGS` with raw pipes, its own state dir (or `stateDir`) and a tag in its environment: what a client
 * that writes its own JSON-RPC sees. Its stdout is read at once, unless `read` is false (a client
 * that never reads). After the test, fails if any process carrying the tag is alive.
 */
export function rawMcp(
  args: string[],
  { read = true, stateDir = tempDir('tv-mcp-state-'), cwd = undefined as string | undefined } = {},
) {
  const tag = randomUUID()
  const child = spawn(process.execPath, [bin, 'mcp', ...args, '--state-dir', stateDir], {
    ...(cwd ? { cwd } : {}),
    env: { ...process.env, TV_TEST_TAG: tag },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  started.push({ child, tag })
  child.stdin.on('error', () => {})
  let output = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  if (read) child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  )
  const messages = (): Message[] =>
    output
      .split('\n')
      .slice(0, -1)
      .map((line) => JSON.parse(line) as Message)
  const waitForMessage = async (match: (m: Message) => boolean): Promise<Message> => {
    const deadline = Date.now() + 20_000
    while (!messages().some(match)) {
      if (Date.now() > deadline) throw new Error(`no such message in ${output.slice(0, 2000)}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    return messages().find(match)!
  }
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`)
  /**
   * Sends `initialize` and `notifications/initialized`, and waits for the toolboxes to be loaded (the
   * server answers before they are) and, when stdout is read, for the answer.
   */
  const initialize = async (): Promise<Message | undefined> => {
    send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    })
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    const deadline = Date.now() + 20_000
    while (!/\ntoolvisor: toolboxes loaded in \d+ ms\n/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`the toolboxes did not load: ${stderr}`)
      await new Promise((r) => setTimeout(r, 20))
    }
    return read ? waitForMessage((m) => m.id === 0) : undefined
  }
  return { child, tag, exited, messages, waitForMessage, send, initialize, stderr: () => stderr }
}
