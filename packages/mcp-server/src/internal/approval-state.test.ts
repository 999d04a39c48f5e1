import type { ApprovalRequest } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { ApprovalStates, type StateCall } from './approval-state.js'

const call: StateCall = {
  sessionId: 's1',
  tool: 'bash',
  args: { command: 'make', timeout: 5, env: { A: '1', B: '2' } },
}
const question: ApprovalRequest = {
  sessionId: 's1',
  connection: undefined,
  tool: 'bash',
  command: 'make',
  justification: 'build',
  workdir: '/w',
  background: false,
  mode: 'danger-full-access',
  signal: new AbortController().signal,
}

describe('ApprovalStates', () => {
  it('verifies a state for its call, whatever the order of the arguments, and binds it to the question', () => {
    const states = new ApprovalStates(60_000)
    const state = states.mint(call, question)
    const reordered = {
      sessionId: 's1',
      tool: 'bash',
      args: { env: { B: '2', A: '1' }, timeout: 5, command: 'make' },
    }
    const verified = states.redeem(state, reordered)
    if (typeof verified === 'string') throw new Error(verified)
    expect(verified.answers(question)).toBe(true)
    for (const changed of [
      { command: 'make install' },
      { mode: 'workspace-write' },
      { workdir: '/other' },
      { workdir: undefined },
      { background: true },
      { tool: 'other' },
    ]) {
      expect(verified.answers({ ...question, ...changed }), JSON.stringify(changed)).toBe(false)
    }
  })

  it("refuses another session's state, another tool's, an expired one, and one already presented", () => {
    let now = 1_000
    const states = new ApprovalStates(60_000, () => now)
    expect(states.redeem(states.mint(call, question), { ...call, sessionId: 's2' })).toBe(
      'it was issued to another session',
    )
    expect(states.redeem(states.mint(call, question), { ...call, tool: 'dsh__bash' })).toBe(
      'it was issued for tool "bash"',
    )
    const state = states.mint(call, question)
    expect(typeof states.redeem(state, call)).toBe('object')
    expect(states.redeem(state, call)).toMatch(/already used by a retry/)
    const late = states.mint(call, question)
    now += 60_000
    expect(states.redeem(late, call)).toMatch(/expired/)
  })

  it('refuses what it did not sign: another instance, an altered or truncated state, an oversized one', () => {
    const states = new ApprovalStates(60_000)
    const state = states.mint(call, question)
    expect(new ApprovalStates(60_000).redeem(state, call)).toMatch(/not a state this server issued/)
    const [payload, mac] = state.split('.') as [string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, session: 's2' })).toString('base64url')
    for (const bad of [
      `${forged}.${mac}`,
      payload,
      `${payload}.`,
      `${payload}.${mac.slice(1)}`,
      'x'.repeat(5000),
    ]) {
      expect(states.redeem(bad, call)).toMatch(/not a state this server issued/)
    }
    // None of those spent the real one.
    expect(typeof states.redeem(state, call)).toBe('object')
  })
})
