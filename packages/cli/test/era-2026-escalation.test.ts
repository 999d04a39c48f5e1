// A bash escalation from a 2026-07-28 client of `toolvisor mcp` (issue 30, decision 0109, point 3):
// that revision asks the user by an `input_required` round. The official v2 client, pinned to the
// revision, answers it through its elicitation handler and the command runs wider once; a retry
// presented again, or with another command, is refused and runs nothing. Run as root and as an
// ordinary user, as most people run toolvisor.
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUserSkip, seenAs, userCommand, userDir } from './as-user.js'
import { bashMcpArgs, eventually, tagged, tempDir } from './helpers.js'
import { hasBwrap, isRoot } from './sandbox-helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

/** Who runs toolvisor: root, or an ordinary user (as most people run it). */
type Runner = 'root' | 'user'

/** A folder `runner` works in, removed after the test. */
function workDir(runner: Runner, prefix: string): string {
  const dir = runner === 'root' ? sandboxUserDir(import.meta.dirname, prefix) : userDir(`${prefix}-`)
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A v2 client pinned to 2026-07-28 on `toolvisor mcp --bash` under bwrap read-only, run by `runner` in `cwd`. */
async function modernBash(runner: Runner, cwd: string, how: { readonly manual?: boolean } = {}) {
  const tag = randomUUID()
  // Root's state in a folder of its own (the work folder is nobody's); the user's in its folder.
  const state = runner === 'root' ? tempDir() : join(cwd, '.state')
  const args = bashMcpArgs('bwrap', 'read-only', '--state-dir', state)
  const command =
    runner === 'root'
      ? { command: process.execPath, args, cwd, env: process.env as Record<string, string> }
      : userCommand(process.execPath, [seenAs(args[0]!), ...args.slice(1)], { cwd })
  const transport = new StdioClientTransport({
    ...command,
    env: { ...command.env, TV_TEST_TAG: tag },
    stderr: 'pipe',
  })
  const client = new Client(
    { name: 'era-2026', version: '1' },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      ...(how.manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  )
  await client.connect(transport)
  cleanups.push(async () => {
    await client.close()
    expect(await eventually(() => tagged(tag).length === 0), 'processes left').toBe(true)
  })
  expect(client.getProtocolEra()).toBe('modern')
  return client
}

function escalating(command: string) {
  return {
    command,
    description: 'Write a marker file',
    sandbox_permissions: 'danger-full-access',
    justification: 'The test writes its marker file.',
  }
}

const runners: Array<{ readonly runner: Runner; readonly skip: boolean }> = [
  { runner: 'root', skip: !hasBwrap || !isRoot },
  { runner: 'user', skip: !hasBwrap || asUserSkip !== undefined },
]

describe.each(runners)(
  'a bash escalation from a 2026-07-28 client (toolvisor run by $runner)',
  ({ runner, skip }) => {
    it.skipIf(skip)(
      'is asked by an input_required round; accepted, the command runs once, wider',
      async () => {
        const cwd = workDir(runner, 'era-2026-work')
        const client = await modernBash(runner, cwd)
        const asked: string[] = []
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(String(request.params.message))
          return { action: asked.length === 1 ? 'accept' : 'decline', content: {} }
        })
        const marker = join(cwd, 'escalated')
        const allowed = await client.callTool({ name: 'bash', arguments: escalating(`echo ran > ${marker}`) })
        expect(allowed.isError).toBeFalsy()
        expect(readFileSync(marker, 'utf8')).toBe('ran\n')
        expect(asked).toHaveLength(1)
        expect(asked[0]).toContain(`echo ran > ${marker}`)
        expect(asked[0]).toContain('danger-full-access')

        // Declined: nothing runs, and the model is told.
        const other = join(cwd, 'declined')
        const refused = await client.callTool({ name: 'bash', arguments: escalating(`echo ran > ${other}`) })
        expect(refused.isError).toBe(true)
        expect(JSON.stringify(refused.content)).toContain('rejected')
        expect(existsSync(other)).toBe(false)
      },
    )

    it.skipIf(skip)(
      'refuses a requestState presented again or for another command, and runs nothing for it',
      async () => {
        const cwd = workDir(runner, 'era-2026-replay')
        const client = await modernBash(runner, cwd, { manual: true })
        const marker = join(cwd, 'count')
        const params = { name: 'bash', arguments: escalating(`echo ran >> ${marker}`) }
        const round = (await client.request(
          { method: 'tools/call', params },
          { allowInputRequired: true },
        )) as unknown as {
          resultType: string
          requestState: string
        }
        expect(round.resultType).toBe('input_required')
        expect(existsSync(marker)).toBe(false)
        const retry = (p: typeof params) =>
          client.request(
            {
              method: 'tools/call',
              params: {
                ...p,
                inputResponses: { approval: { action: 'accept', content: {} } },
                requestState: round.requestState,
              },
            },
            { allowInputRequired: true },
          )
        const moved = { ...params, arguments: escalating(`echo moved >> ${marker}`) }
        await expect(retry(moved)).rejects.toThrow(/the approval state does not match this call/)
        expect(existsSync(marker)).toBe(false)
        await expect(retry(params)).rejects.toThrow(/good for one retry/)
        expect(existsSync(marker)).toBe(false)
      },
    )
  },
)
