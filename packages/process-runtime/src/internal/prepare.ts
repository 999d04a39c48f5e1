import { mkdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type LimitsSpec, LoadingError, type ProcessSpec, type RuntimeSpec } from '@toolvisor/describe-v2'
import type { Launchers, OwnPath, RunAsMechanism, RunAsTarget, SandboxPolicy } from '@toolvisor/launchers'
import {
  type AccessNeed,
  type Account,
  groupIdsOf,
  lookupAccount,
  missingAccess,
  refuseUnlistedRunAs,
  selfAccount,
} from '@toolvisor/run-as'
import type { LaunchFacts, PreparedTool, RuntimeOptions } from '../types.js'
import type { EnvdirRootGuard } from './envdir-root.js'
import { type EnvironmentPolicy, effectivePolicy } from './environment.js'
import { type AppliedLimits, applyLimits, HOUSE_LIMITS, type LimitFacts } from './limits.js'
import { chooseMechanism, runAsMechanismOf } from './mechanism-choice.js'
import { checkNetwork } from './network-bounds.js'
import { reachableOwn, refuseOwn } from './own-paths.js'
import { type Fail, isInside, resolvePolicy } from './policy.js'

/** The default `--sandbox-user`. */
export const DEFAULT_SANDBOX_USER = 'nobody'

/** What preparing a tool needs besides the tool: the operator's options and what this host has. */
export interface PrepareContext {
  readonly options: RuntimeOptions
  readonly launchers: Launchers
  readonly execHelper: LaunchFacts['execHelper']
  /** toolvisor's own paths (`ownPathsOf`): no grant may reach them. */
  readonly own: readonly OwnPath[]
  /** What every writable grant keeps read-only (`protectedPaths`). */
  readonly protect: readonly string[]
  /** The envdir root's permissions, checked again when a tool that declares an envdir loads. */
  readonly envdirRoot?: EnvdirRootGuard
  /** What enforces limits here (the cgroups, the fork server). */
  readonly limitFacts: LimitFacts
}

const isRoot = () => process.geteuid?.() === 0

/**
 * Checks a tool's runtime declarations against the operator's configuration (see
 * `ProcessRuntime.prepare`). `declaredBy`: a tool's declaration (its run_as must be in
 * `runAsAllow`), or the operator's own process (`preparePlain`: the operator chose it).
 */
export async function prepareTool(
  input: PrepareInput,
  context: PrepareContext,
  declaredBy: 'tool' | 'operator',
): Promise<PreparedTool> {
  const fail: Fail = (code, field, reason) => {
    throw new LoadingError(code, { tool: input.path, field, reason })
  }
  const { options, launchers } = context
  const declared = input.runtime
  const envdir = declared.envdir === undefined ? undefined : envdirOf(declared.envdir, context, fail)
  const rundir = declared.rundir === undefined ? undefined : rundirOf(declared.rundir, input.dir, fail)
  const runAsMechanism = await declaredRunAs(declared.runAs, context, declaredBy, fail)

  // Who the tool runs as when it is not the runtime's user: its declaration, else (root only,
  // sandboxed only) the sandbox user: a sandboxed tool is never host root unless it asks for it.
  const sandboxUser = declared.runAs === undefined && declared.sandbox !== undefined && isRoot()
  const target: RunAsTarget | undefined = sandboxUser
    ? { user: options.sandboxUser ?? DEFAULT_SANDBOX_USER }
    : declared.runAs
  const account = target === undefined ? undefined : await accountOf(target, sandboxUser, fail)
  const sandbox =
    declared.sandbox === undefined
      ? undefined
      : await sandboxOf(input, target, account, context, fail, declaredBy)
  let runAs: PreparedTool['runAs']
  if (target !== undefined) {
    // The sandbox user needs no --run-as: choosing a sandbox as root is the opt-in.
    runAs = sandbox?.mechanism.handlesRunAs
      ? { target }
      : {
          target,
          mechanism: runAsMechanism ?? (await runAsMechanismOf(options, launchers, target, fail, 'setpriv')),
        }
  }
  if ((sandbox !== undefined || runAs !== undefined) && !context.execHelper.available) {
    const helper = context.execHelper
    fail(
      'RUNTIME_ERR_EXEC_HELPER',
      sandbox ? '$.runtime.sandbox' : '$.runtime.run_as',
      `${helper.reason} (fix: ${helper.fix})`,
    )
  }
  await checkAccess(input, sandbox?.policy, account, sandboxUser, fail)
  const limits = limitsOf(declared.limits, declaredBy, context, fail)
  return {
    path: input.path,
    dir: input.dir,
    name: input.slug,
    process: input.process,
    runtime: input.runtime,
    environment: effectivePolicy(options.environment, input.environment, sandbox !== undefined),
    ...(sandbox ? { sandbox } : {}),
    ...(runAs ? { runAs } : {}),
    ...(account && account.uid !== process.geteuid?.() ? { account } : {}),
    ...(envdir ? { envdir } : {}),
    ...(rundir ? { rundir } : {}),
    limits,
  }
}

/** The limits a tool runs under; the operator's own processes (a bash command): what it gave them, no ceiling. */
function limitsOf(
  declared: LimitsSpec | undefined,
  declaredBy: 'tool' | 'operator',
  context: PrepareContext,
  fail: Fail,
): AppliedLimits {
  const policy = context.options.limits ?? {}
  const operator = { defaults: policy.defaults ?? HOUSE_LIMITS, ceilings: {} }
  return applyLimits(declared, declaredBy === 'operator' ? operator : policy, context.limitFacts, fail)
}

/**
 * The run_as mechanism of a declared run_as, qualified for its user; a tool's own run_as must
 * name a user `runAsAllow` allows, checked once the configured mechanism is known to exist and
 * before the user is even looked up.
 */
async function declaredRunAs(
  target: RunAsTarget | undefined,
  context: PrepareContext,
  declaredBy: 'tool' | 'operator',
  fail: Fail,
): Promise<RunAsMechanism | undefined> {
  if (target === undefined) return undefined
  const { options, launchers } = context
  if (declaredBy === 'tool' && launchers.runAs(options.runAs ?? '') !== undefined)
    await refuseUnlistedRunAs(target, options.runAsAllow ?? [], fail)
  return runAsMechanismOf(options, launchers, target, fail)
}

/** The declared sandbox's policy and the mechanism that honours it. */
async function sandboxOf(
  input: PrepareInput,
  target: RunAsTarget | undefined,
  account: Account | undefined,
  context: PrepareContext,
  fail: Fail,
  declaredBy: 'tool' | 'operator',
): Promise<NonNullable<PreparedTool['sandbox']>> {
  const declared = input.runtime
  const name = context.options.sandbox
  if (name === undefined) {
    fail(
      'RUNTIME_ERR_SANDBOX',
      '$.runtime.sandbox',
      'declared, but no sandbox mechanism is configured: start toolvisor with --sandbox bwrap, landlock or auto',
    )
  }
  const resolved = resolvePolicy(input, declared.sandbox!, declared.runAs !== undefined, fail)
  checkNetwork(resolved.net, context.options, declaredBy, fail)
  refuseOwn(resolved, context.own, input.ownPaths ?? 'refuse', fail)
  const user = account ?? selfAccount()
  const own = await reachableOwn(user, context.own)
  const policy: SandboxPolicy = {
    ...resolved,
    own,
    ...(resolved.write.length > 0 ? { protect: context.protect } : {}),
    user: { uid: user.uid, gid: user.gid, groups: await groupIdsOf(user) },
  }
  const mechanism = await chooseMechanism(name as string, policy, target, context.launchers, fail)
  return { mechanism, policy }
}

function envdirOf(name: string, context: PrepareContext, fail: Fail): string {
  const { options } = context
  if (options.envdirRoot === undefined) {
    fail(
      'RUNTIME_ERR_ENVDIR',
      '$.runtime.envdir',
      'declared, but no envdir root is configured: start toolvisor with --envdir-root DIR',
    )
  }
  const refused = context.envdirRoot?.refusal()
  if (refused !== undefined) fail('RUNTIME_ERR_ENVDIR_PERMISSIONS', '$.runtime.envdir', refused)
  const envdir = join(options.envdirRoot as string, name)
  if (!isDirectory(envdir))
    fail(
      'RUNTIME_ERR_ENVDIR',
      '$.runtime.envdir',
      `${envdir} is not a directory: create it under the envdir root`,
    )
  return envdir
}

function rundirOf(declared: string, dir: string, fail: Fail): string {
  const rundir = resolve(dir, declared)
  if (!isInside(rundir, dir))
    fail('RUNTIME_ERR_RUNDIR', '$.runtime.rundir', `"${declared}" leads outside the tool's directory`)
  try {
    mkdirSync(rundir, { recursive: true })
  } catch (error) {
    fail('RUNTIME_ERR_RUNDIR', '$.runtime.rundir', `cannot create ${rundir}: ${(error as Error).message}`)
  }
  return rundir
}

async function accountOf(target: RunAsTarget, sandboxUser: boolean, fail: Fail): Promise<Account> {
  const found = await lookupAccount(target.user, target.group)
  if ('missing' in found) {
    if (sandboxUser) {
      fail(
        'RUNTIME_ERR_SANDBOX_USER',
        '$.runtime.sandbox',
        `the sandbox user "${target.user}" does not exist: create it (useradd --system --no-create-home ${target.user}) or configure another one (--sandbox-user NAME)`,
      )
    }
    const what =
      found.missing === 'user' ? `no such user "${target.user}"` : `no such group "${target.group}"`
    fail('RUNTIME_ERR_RUN_AS', '$.runtime.run_as', `${what}: create it or fix run_as`)
  }
  return found as Account
}

/**
 * Refuses, at load, a tool whose user could not reach what it declared: its directory and
 * executable, each fs.read path (read) and fs.write path (write). Never fixed silently (no chown).
 */
async function checkAccess(
  input: PrepareInput,
  policy: SandboxPolicy | undefined,
  account: Account | undefined,
  sandboxUser: boolean,
  fail: Fail,
): Promise<void> {
  if (account === undefined && policy === undefined) return
  const needs: Array<AccessNeed & { readonly field: string }> = [
    { path: policy?.toolDir ?? input.dir, mode: 'rx', field: "the tool's directory" },
    { path: policy?.executable ?? input.path, mode: 'rx', field: "the tool's executable" },
    ...(policy?.read ?? []).map((path, i) => ({
      path,
      mode: dirMode(path, 'r'),
      field: `$.runtime.sandbox.fs.read[${i}]`,
    })),
    ...(policy?.write ?? []).map((path, i) => ({
      path,
      mode: dirMode(path, 'w'),
      field: `$.runtime.sandbox.fs.write[${i}]`,
    })),
  ]
  const self = { name: 'toolvisor', uid: process.geteuid?.() ?? -1, gid: -1, home: '' }
  const [missing] = await missingAccess(account ?? self, needs)
  if (missing === undefined) return
  const need = missing as (typeof needs)[number]
  const who =
    account === undefined
      ? `toolvisor's own user (uid ${self.uid})`
      : `the ${sandboxUser ? 'sandbox' : 'run_as'} user "${account.name}" (uid ${account.uid})`
  const verb = need.mode.includes('w') ? 'writable' : 'readable'
  const fixes = [
    need.mode.includes('w')
      ? `make it writable for that user (chown ${account?.name ?? 'USER'} ${need.path}, or a group the user is in with chmod g+w)`
      : `make it readable for that user (chmod o+rx on it and on every directory above it, or a group the user is in)`,
    ...(sandboxUser
      ? ['declare run_as for the tool', 'configure another sandbox user (--sandbox-user NAME)']
      : []),
  ]
  const named = need.field.startsWith('$')
  const field = named ? need.field : policy ? '$.runtime.sandbox' : '$.runtime.run_as'
  const what = named ? need.path : `${need.field} ${need.path}`
  fail('RUNTIME_ERR_ACCESS', field, `${what} is not ${verb} by ${who}: ${fixes.join(', or ')}`)
}

/** Directories need search (`x`) as well to be of any use. */
function dirMode(path: string, mode: 'r' | 'w'): string {
  return isDirectory(path) ? `${mode}x` : mode
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** What `prepare` needs of a tool. */
export interface PrepareInput {
  readonly path: string
  readonly dir: string
  readonly slug: string
  readonly process: ProcessSpec
  readonly runtime: RuntimeSpec
  /** The toolbox's environment policy, over the runtime's. */
  readonly environment?: EnvironmentPolicy
  /**
   * A grant that holds one of toolvisor's own paths below it: `refuse` it (a tool's declaration,
   * the default), or `mask` the path inside (a policy the operator chose, such as a bash mode that
   * reads `/`). A grant at or under one is refused either way (decision 0095).
   */
  readonly ownPaths?: 'refuse' | 'mask'
}
