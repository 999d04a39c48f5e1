/** Which sandbox and run_as mechanism a tool gets, and how their refusals read. */
import type {
  Launchers,
  Qualification,
  RunAsMechanism,
  RunAsTarget,
  SandboxMechanism,
  SandboxPolicy,
} from '@toolvisor/launchers'
import type { RuntimeOptions } from '../types.js'
import { type Fail, fieldPath } from './policy.js'

/** The mechanisms `auto` tries, strongest first (spec §1.4). */
export const AUTO_ORDER = ['bwrap', 'landlock'] as const

export async function chooseMechanism(
  name: string,
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  launchers: Launchers,
  fail: Fail,
): Promise<SandboxMechanism> {
  if (name !== 'auto') {
    const mechanism = launchers.sandbox(name)
    if (mechanism === undefined) {
      return fail(
        'RUNTIME_ERR_SANDBOX',
        '$.runtime.sandbox',
        `the sandbox mechanism "${name}" is not installed (known: ${known(launchers)})`,
      )
    }
    const verdict = await safeQualify(mechanism, policy, runAs)
    if (!verdict.ok)
      return fail(
        'RUNTIME_ERR_SANDBOX',
        fieldPath(verdict.field),
        `${name} cannot honour it: ${withFix(verdict)}`,
      )
    return mechanism
  }
  const refusals: string[] = []
  for (const candidate of AUTO_ORDER) {
    const mechanism = launchers.sandbox(candidate)
    if (mechanism === undefined) {
      refusals.push(`${candidate}: not installed`)
      continue
    }
    const verdict = await safeQualify(mechanism, policy, runAs)
    if (verdict.ok) return mechanism
    refusals.push(`${candidate}: ${verdict.field}: ${verdict.reason}`)
  }
  return fail(
    'RUNTIME_ERR_SANDBOX',
    '$.runtime.sandbox',
    `no mechanism honours every declared field (auto): ${refusals.join('; ')}`,
  )
}

/** A mechanism's verdict; a mechanism that throws refuses. */
export async function safeQualify(
  mechanism: SandboxMechanism,
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
): Promise<Qualification> {
  try {
    return await mechanism.qualify(policy, runAs)
  } catch (error) {
    return { ok: false, field: 'mechanism', reason: `qualify failed: ${(error as Error).message}` }
  }
}

export function withFix(verdict: Extract<Qualification, { ok: false }>): string {
  return verdict.fix ? `${verdict.reason} (fix: ${verdict.fix})` : verdict.reason
}

function known(launchers: Launchers): string {
  const names = launchers.sandboxes().map((m) => m.name)
  return names.length > 0 ? names.join(', ') : 'none'
}

export /** The configured run_as mechanism (or `fallback`), qualified for `target`. */
async function runAsMechanismOf(
  options: RuntimeOptions,
  launchers: Launchers,
  target: RunAsTarget,
  fail: Fail,
  fallback?: string,
): Promise<RunAsMechanism> {
  const name = options.runAs ?? fallback
  if (name === undefined) {
    fail(
      'RUNTIME_ERR_RUN_AS',
      '$.runtime.run_as',
      'declared, but no run_as mechanism is configured: start toolvisor with --run-as setpriv',
    )
  }
  const mechanism = launchers.runAs(name as string)
  if (mechanism === undefined)
    fail('RUNTIME_ERR_RUN_AS', '$.runtime.run_as', unknownRunAs(name as string, launchers))
  const verdict = await (mechanism as RunAsMechanism).qualify(target)
  if (!verdict.ok) fail('RUNTIME_ERR_RUN_AS', '$.runtime.run_as', withFix(verdict))
  return mechanism as RunAsMechanism
}

/** The refusal of a run_as mechanism nobody registered, listing the ones there are. */
export function unknownRunAs(name: string, launchers: Launchers): string {
  const known = launchers.runAsMechanisms().map((m) => m.name)
  const use = known.map((k) => `--run-as ${k}`).join(' or ')
  return `the run_as mechanism "${name}" is not available (known: ${known.join(', ') || 'none'})${use ? `: start toolvisor with ${use}` : ''}`
}
