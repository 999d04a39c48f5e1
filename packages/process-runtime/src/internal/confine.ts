import { dirname } from 'node:path'
import type { RuntimeSpec } from '@toolvisor/describe-v2'
import { LoadingError } from '@toolvisor/describe-v2'
import type { OwnPath, RunAsTarget, SandboxMechanism, SandboxPolicy } from '@toolvisor/launchers'
import { type Account, lookupAccount, missingAccess, selfAccount } from '@toolvisor/run-as'
import type { PreparedTool } from '../types.js'
import { effectivePolicy } from './environment.js'
import { AUTO_ORDER, safeQualify, unknownRunAs, withFix } from './mechanism-choice.js'
import { reachableOwn, refuseOwn } from './own-paths.js'
import { confiningPolicy } from './policy.js'
import type { PrepareContext } from './prepare.js'
import { RAW_ONESHOT } from './raw.js'

const NO_RUNTIME: RuntimeSpec = {
  environment: {},
  timeout: {},
  onExit: 'report',
  cancel: { signal: 'SIGTERM' },
}

/**
 * How `describe` and `help` run (see `ProcessRuntime.confined`). Without a configured mechanism:
 * as the runtime's user, unsandboxed. With one: under the first mechanism (of `auto`'s order, or
 * the configured one) that accepts the confining policy, with a private /tmp where it has one and
 * none at all where it has not, as the sandbox user when toolvisor is root.
 */
export async function confineTool(path: string, context: PrepareContext): Promise<PreparedTool> {
  const bare: PreparedTool = {
    path,
    dir: dirname(path),
    name: path,
    process: RAW_ONESHOT,
    runtime: NO_RUNTIME,
    environment: effectivePolicy(
      context.options.environment,
      undefined,
      context.options.sandbox !== undefined,
    ),
  }
  const configured = context.options.sandbox
  if (configured === undefined) return bare
  const fail = (reason: string): never => {
    throw new LoadingError('RUNTIME_ERR_CONFINE', {
      tool: path,
      reason: `describe cannot run confined: ${reason}`,
    })
  }
  if (!context.execHelper.available) fail(`${context.execHelper.reason} (fix: ${context.execHelper.fix})`)
  const root = process.geteuid?.() === 0
  const user = context.options.sandboxUser ?? 'nobody'
  const target: RunAsTarget | undefined = root ? { user } : undefined
  const account = target === undefined ? undefined : await lookupAccount(user)
  if (account !== undefined && 'missing' in account) {
    return fail(
      `the sandbox user "${user}" does not exist: create it, or configure another one (--sandbox-user NAME)`,
    )
  }
  // The tool's directory is the one grant describe has: it must leave toolvisor's own paths out.
  refuseOwn(confiningPolicy(path, 'none'), context.own, 'refuse', (_code, _field, reason) => fail(reason))
  const own = await reachableOwn(account ?? selfAccount(), context.own)
  const { mechanism, policy } = await pick(path, configured, target, own, context, fail)
  await mustReach(policy, account, user, fail)
  let runAs: PreparedTool['runAs']
  if (target !== undefined) {
    if (mechanism.handlesRunAs) runAs = { target }
    else {
      const name = context.options.runAs ?? 'setpriv'
      const runAsMechanism = context.launchers.runAs(name)
      if (runAsMechanism === undefined) return fail(unknownRunAs(name, context.launchers))
      const verdict = await runAsMechanism.qualify(target)
      if (!verdict.ok) return fail(withFix(verdict))
      runAs = { target, mechanism: runAsMechanism }
    }
  }
  return {
    ...bare,
    sandbox: { mechanism, policy },
    ...(runAs ? { runAs } : {}),
    ...(account !== undefined && !('missing' in account) ? { account } : {}),
  }
}

/** Fails unless the user describe runs as can read and enter the tool's directory and executable. */
async function mustReach(
  policy: SandboxPolicy,
  account: Account | undefined,
  user: string,
  fail: (reason: string) => never,
): Promise<void> {
  const [missing] = await missingAccess(
    account ?? { name: '', uid: process.geteuid?.() ?? -1, gid: -1, home: '' },
    [
      { path: policy.toolDir, mode: 'rx' },
      { path: policy.executable, mode: 'rx' },
    ],
  )
  if (missing === undefined) return
  const who =
    account === undefined ? "toolvisor's own user" : `the sandbox user "${user}" (uid ${account.uid})`
  fail(
    `${missing.path} is not readable by ${who}: chmod o+rx it and every directory above it, or configure another sandbox user (--sandbox-user NAME)`,
  )
}

async function pick(
  path: string,
  configured: string,
  runAs: RunAsTarget | undefined,
  own: readonly OwnPath[],
  context: PrepareContext,
  fail: (reason: string) => never,
): Promise<{ mechanism: SandboxMechanism; policy: SandboxPolicy }> {
  const names = configured === 'auto' ? AUTO_ORDER : [configured]
  const refusals: string[] = []
  for (const name of names) {
    const mechanism = context.launchers.sandbox(name)
    if (mechanism === undefined) {
      refusals.push(`${name}: not installed`)
      continue
    }
    // A private /tmp where the mechanism has one; else none at all (never the host's).
    for (const tmp of ['private', 'none'] as const) {
      const policy: SandboxPolicy = { ...confiningPolicy(path, tmp), own }
      const verdict = await safeQualify(mechanism, policy, runAs)
      if (verdict.ok) return { mechanism, policy }
      if (verdict.field !== 'tmp') {
        refusals.push(`${name}: ${verdict.field}: ${withFix(verdict)}`)
        break
      }
    }
  }
  return fail(refusals.join('; '))
}
