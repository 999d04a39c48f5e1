// The manual multi round-trip of a 2026-07-28 call, as a client that does not fulfil
// `input_required` itself (`inputRequired: { autoFulfill: false }`) drives it.
import type { Client } from '@modelcontextprotocol/client'
import { expect } from 'vitest'

export type Params = { name: string; arguments: Record<string, unknown> }

/** The first round of a call that asks: its `input_required` answer. */
export async function roundOne(client: Client, params: Params) {
  const answer = (await client.request(
    { method: 'tools/call', params },
    { allowInputRequired: true },
  )) as unknown as { resultType: string; inputRequests: Record<string, unknown>; requestState: string }
  expect(answer.resultType).toBe('input_required')
  expect(typeof answer.requestState).toBe('string')
  return answer
}

/** The retry of a call with its answers and a state. */
export function retry(
  client: Client,
  params: Params,
  inputResponses: Record<string, unknown>,
  requestState: string,
) {
  return client.request(
    { method: 'tools/call', params: { ...params, inputResponses, requestState } },
    { allowInputRequired: true },
  )
}
