import type { SandboxPolicy } from '@toolvisor/launchers'
import type { RuntimeOptions } from '../types.js'
import type { Fail } from './policy.js'

/**
 * A tool's network against the operator's bounds, and an allow list against what can enforce it
 * (decision 0111): refused at load, naming the field, never run with more network than declared.
 */
export function checkNetwork(
  net: SandboxPolicy['net'],
  options: RuntimeOptions,
  declaredBy: 'tool' | 'operator',
  fail: Fail,
) {
  const bounds = options.network ?? {}
  const field = '$.runtime.sandbox.net'
  if (net === 'none') return
  if (declaredBy === 'tool' && bounds.force === 'none')
    fail(
      'RUNTIME_ERR_SANDBOX',
      field,
      'the operator allows tools no network (toolvisor.json network.force "none")',
    )
  if (net === 'host') {
    if (declaredBy === 'tool' && bounds.host === false)
      fail(
        'RUNTIME_ERR_SANDBOX',
        field,
        'the operator does not let tools have the host network (toolvisor.json network.host false): declare an allow list',
      )
    return
  }
  const gates = bounds.gates
  if (gates === undefined)
    fail(
      'RUNTIME_ERR_SANDBOX',
      field,
      'an allow list needs the network gates (@toolvisor/network), and this runtime was composed without them',
    )
  const facts = gates.facts()
  if (!facts.available)
    fail(
      'RUNTIME_ERR_SANDBOX',
      field,
      `an allow list cannot be enforced here: ${facts.reason} (fix: ${facts.fix})`,
    )
  const refused = gates.check(net, declaredBy === 'tool' ? bounds.ceiling : undefined)
  if (refused !== undefined) fail('RUNTIME_ERR_SANDBOX', `${field}.${refused.field}`, refused.reason)
}
