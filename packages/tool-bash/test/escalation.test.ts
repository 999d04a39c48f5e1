// Seed 001's escalation gate, every text exactly: validation, non-widening, and each way approval
// fails closed with nothing run (a marker file the command would write must not exist).
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { ApprovalOutcome } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { ESCALATION_COMMAND_LIMITS, ESCALATION_TEXTS } from '../src/modes.js'
import { NETWORK_TEXTS } from '../src/network.js'
import { compose } from './helpers.js'
import { answering, openDir } from './sandbox-helpers.js'

const ask = (extra: Record<string, unknown>) => ({
  command: 'echo ran > marker',
  description: 'Write the marker',
  ...extra,
})
const WHY = 'The test needs to write its marker.'

describe('bash escalation (seed 001)', () => {
  it('validates the fields with the seed texts, asking no one and running nothing', async () => {
    const work = openDir('work')
    const approval = answering('allowed-once')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap', approval })
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ sandbox_permissions: 'workspace-write' }, ESCALATION_TEXTS.needsJustification],
      [{ justification: WHY }, NETWORK_TEXTS.justificationAlone('sandbox_permissions or network_allow')],
      [{ sandbox_permissions: 'workspace-write', justification: '  ' }, ESCALATION_TEXTS.emptyJustification],
      [
        { sandbox_permissions: 'root', justification: WHY },
        'invalid sandbox_permissions: expected one of workspace-write, danger-full-access, got "root"',
      ],
    ]
    for (const [extra, text] of cases) {
      expect(await call('bash', ask(extra)), JSON.stringify(extra)).toMatchObject({
        isError: true,
        text: `Error: ${text}`,
      })
    }
    expect(ESCALATION_TEXTS.needsJustification).toBe(
      'invalid escalation: sandbox_permissions requires a justification',
    )
    // Seed 001 says "... together with sandbox_permissions"; network_allow takes one too (decision 0112).
    expect(NETWORK_TEXTS.justificationAlone('sandbox_permissions or network_allow')).toBe(
      'invalid escalation: justification is only valid together with sandbox_permissions or network_allow',
    )
    expect(ESCALATION_TEXTS.emptyJustification).toBe('invalid justification: expected a non-empty sentence')
    expect(approval.asked).toEqual([])
    expect(existsSync(join(work, 'marker'))).toBe(false)
  })

  it('a non-widening request fails without asking anyone', async () => {
    const work = openDir('work')
    const approval = answering('allowed-once')
    const { call } = await compose(
      { sandbox: 'workspace-write', workdir: work },
      { sandbox: 'bwrap', approval },
    )
    const same = await call('bash', ask({ sandbox_permissions: 'workspace-write', justification: WHY }))
    expect(same.text).toBe(
      'Error: sandbox escalation to "workspace-write" is not strictly wider than this call\'s current "workspace-write" mode',
    )
    expect(approval.asked).toEqual([])
    expect(existsSync(join(work, 'marker'))).toBe(false)
  })

  it('without a sandboxing mode the fields are not shown, and a call sending them gets the seed text', async () => {
    const work = openDir('work')
    const { call, tools } = await compose({ workdir: work })
    const schema = tools.get('bash')!.inputSchema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(schema.properties)).not.toContain('sandbox_permissions')
    expect(tools.get('bash_sandbox_mode')).toBeUndefined()
    const sent = await call('bash', ask({ sandbox_permissions: 'danger-full-access', justification: WHY }))
    expect(sent.text).toBe(
      'Error: sandbox_permissions is not available in this composition (no sandboxing executor to escalate)',
    )
    expect(existsSync(join(work, 'marker'))).toBe(false)
  })

  const outcomes: Array<[ApprovalOutcome, string]> = [
    ['rejected', 'the user rejected escalating this command to "workspace-write"'],
    ['cancelled', 'approval for escalating to "workspace-write" was cancelled'],
    [
      'unavailable',
      'sandbox escalation to "workspace-write" requires approval, but no approval channel is available',
    ],
  ]
  it.each(outcomes)(
    'approval answering %s fails closed with its own text; nothing runs',
    async (outcome, text) => {
      const work = openDir('work')
      const approval = answering(outcome)
      const { call, tools } = await compose(
        { sandbox: 'read-only', workdir: work },
        { sandbox: 'bwrap', approval },
      )
      const schema = tools.get('bash')!.inputSchema as unknown as {
        properties: Record<string, { enum?: unknown }>
      }
      expect(schema.properties.sandbox_permissions?.enum).toEqual(['workspace-write', 'danger-full-access'])
      const result = await call('bash', ask({ sandbox_permissions: 'workspace-write', justification: WHY }))
      expect(result).toMatchObject({ isError: true, text: `Error: ${text}` })
      expect(approval.asked).toHaveLength(1)
      expect(existsSync(join(work, 'marker'))).toBe(false)
    },
  )

  it('no approval service, or a call with no session, fails closed with its own text', async () => {
    const work = openDir('work')
    const { call, tools } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap' })
    const args = ask({ sandbox_permissions: 'danger-full-access', justification: WHY })
    expect((await call('bash', args)).text).toBe(
      'Error: sandbox escalation to "danger-full-access" requires approval, but no approval service is composed',
    )
    const withService = await compose(
      { sandbox: 'read-only', workdir: work },
      { sandbox: 'bwrap', approval: answering('allowed-once') },
    )
    const anonymous = await withService.tools.call('bash', args, { signal: AbortSignal.timeout(5000) })
    expect(anonymous.content[0]?.text).toBe(
      'Error: sandbox escalation to "danger-full-access" requires approval, but the call has no agent to route it through',
    )
    expect(tools.get('bash')).toBeDefined()
    expect(existsSync(join(work, 'marker'))).toBe(false)
  })

  it("asks with the call's connection, its resolved workdir and whether it runs in the background", async () => {
    const work = openDir('work')
    mkdirSync(join(work, 'sub'))
    const approval = answering('rejected')
    const { tools } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap', approval })
    const connection = Symbol('a connection')
    const args = ask({ sandbox_permissions: 'danger-full-access', justification: WHY, workdir: 'sub' })
    const ctx = { sessionId: 'alice', connection, signal: AbortSignal.timeout(10_000) }
    await tools.call('bash', args, ctx)
    await tools.call('bash', { ...args, run_in_background: true }, ctx)
    expect(approval.asked.map(({ signal: _, ...asked }) => asked)).toEqual([
      {
        sessionId: 'alice',
        connection,
        tool: 'bash',
        command: 'echo ran > marker',
        justification: WHY,
        workdir: join(work, 'sub'),
        background: false,
        mode: 'danger-full-access',
      },
      expect.objectContaining({ connection, background: true }),
    ])
    expect(existsSync(join(work, 'sub', 'marker'))).toBe(false)
  })

  it('a command longer than the prompt shows is refused before anyone is asked; a missing workdir too', async () => {
    const work = openDir('work')
    const approval = answering('allowed-once')
    const { call } = await compose({ sandbox: 'read-only', workdir: work }, { sandbox: 'bwrap', approval })
    const escalate = { sandbox_permissions: 'danger-full-access', justification: WHY }
    const lines = ESCALATION_COMMAND_LIMITS.lines + 1
    const tall = await call(
      'bash',
      ask({ ...escalate, command: `echo ran > marker${'\n:'.repeat(lines - 1)}` }),
    )
    expect(tall).toMatchObject({
      isError: true,
      text: `Error: sandbox escalation to "danger-full-access" was not asked: the command has ${lines} lines and ${17 + 2 * (lines - 1)} characters, more than the approval prompt shows (at most 200 lines and 16384 characters); write the script to a file and escalate the command that runs it`,
    })
    const wide = await call(
      'bash',
      ask({ ...escalate, command: `: ${'x'.repeat(ESCALATION_COMMAND_LIMITS.characters)}` }),
    )
    expect(wide.text).toContain('the command has 1 line and 16386 characters')
    const nowhere = await call('bash', ask({ ...escalate, workdir: 'missing' }))
    expect(nowhere.text).toMatch(
      /^Error: invalid workdir: .*\/missing is not a directory \(ENOENT\); nothing was started$/,
    )
    expect(approval.asked).toEqual([])
    expect(existsSync(join(work, 'marker'))).toBe(false)
  })
})
