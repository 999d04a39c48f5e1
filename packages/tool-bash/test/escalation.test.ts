// Seed 001's escalation gate, every text exactly: validation, non-widening, and each way approval
// fails closed with nothing run (a marker file the command would write must not exist).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ApprovalOutcome } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { ESCALATION_TEXTS } from '../src/modes.js'
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
      [{ justification: WHY }, ESCALATION_TEXTS.needsPermissions],
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
    expect(ESCALATION_TEXTS.needsPermissions).toBe(
      'invalid escalation: justification is only valid together with sandbox_permissions',
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
})
