import type { ApprovalRequest } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { ApprovalStates, type StateCall } from './approval-state.js'
import { APPROVAL_INPUT_KEY, Rounds } from './input-round.js'

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
      { network: ['registry.test'] },
    ]) {
      expect(verified.answers({ ...question, ...changed }), JSON.stringify(changed)).toBe(false)
    }
  })

  it('binds the network names asked for: other names, fewer, more or another order do not answer it', () => {
    const states = new ApprovalStates(60_000)
    const asked = { ...question, mode: 'workspace-write', network: ['registry.test', '*.github.com'] }
    const verified = states.redeem(states.mint(call, asked), call)
    if (typeof verified === 'string') throw new Error(verified)
    expect(verified.answers(asked)).toBe(true)
    expect(verified.answers({ ...asked, network: ['registry.test', '*.github.com'] })).toBe(true)
    for (const network of [
      ['other.test'],
      ['registry.test'],
      ['registry.test', '*.github.com', 'other.test'],
      ['*.github.com', 'registry.test'],
      [],
      undefined,
    ]) {
      expect(verified.answers({ ...asked, network }), JSON.stringify(network)).toBe(false)
    }
    // A question without names answers only a state minted without names (none and empty alike).
    const plain = states.redeem(states.mint(call, question), call)
    if (typeof plain === 'string') throw new Error(plain)
    expect(plain.answers({ ...question, network: [] })).toBe(true)
    expect(plain.answers({ ...question, network: ['registry.test'] })).toBe(false)
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

describe('a round whose retry asks about other network names', () => {
  it('is refused with -32602 even with the same arguments, and its question is not answered', () => {
    const rounds = new Rounds(new ApprovalStates(60_000))
    const asked = { ...question, mode: 'workspace-write', network: ['unlisted.test'] }
    const first = rounds.open({
      ...call,
      requestState: undefined,
      inputResponses: undefined,
      canElicit: true,
    })
    expect(first.round.answer({ ...asked, connection: first.round.connection })).toBe('unavailable')
    const required = first.round.settle() as unknown as { requestState: string }
    first.close()
    const accept = { [APPROVAL_INPUT_KEY]: { action: 'accept', content: {} } }
    const retry = (network: string[]) => {
      const again = rounds.open({
        ...call,
        requestState: required.requestState,
        inputResponses: accept,
        canElicit: true,
      })
      const outcome = again.round.answer({ ...asked, network, connection: again.round.connection })
      return { outcome, settle: () => again.round.settle() }
    }
    // The same call (its arguments the same), now asking about another name: not this state's question.
    const other = retry(['other.test'])
    expect(other.outcome).toBe('unavailable')
    expect(other.settle).toThrow(
      expect.objectContaining({
        code: -32602,
        message: expect.stringContaining(
          'the approval state does not match this call: it was issued for another command, mode, working directory, background choice or network names',
        ),
      }),
    )
  })

  it('answers the retry that asks about the very names it was minted for', () => {
    const rounds = new Rounds(new ApprovalStates(60_000))
    const asked = { ...question, mode: 'workspace-write', network: ['unlisted.test'] }
    const first = rounds.open({
      ...call,
      requestState: undefined,
      inputResponses: undefined,
      canElicit: true,
    })
    first.round.answer(asked)
    const { requestState } = first.round.settle() as unknown as { requestState: string }
    const accept = { [APPROVAL_INPUT_KEY]: { action: 'accept', content: {} } }
    const again = rounds.open({ ...call, requestState, inputResponses: accept, canElicit: true })
    expect(again.round.answer(asked)).toBe('allowed-once')
    expect(again.round.settle()).toBeUndefined()
  })
})
