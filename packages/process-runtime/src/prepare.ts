import { mkdirSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { LoadingError } from '@toolvisor/describe-v2'
import type {
  Launchers,
  Qualification,
  RunAsTarget,
  SandboxField,
  SandboxMechanism,
  SandboxPolicy,
} from './launchers.js'
import type { PreparedTool, PrepareInput, RuntimeOptions } from './types.js'

/** The mechanisms `auto` tries, strongest first (spec §1.4). */
export const AUTO_ORDER = ['bwrap', 'landlock'] as const

/** Checks a tool's runtime declarations against the operator's configuration (see `ProcessRuntime.prepare`). */
export async function prepareTool(
  input: PrepareInput,
  options: RuntimeOptions,
  launchers: Launchers,
): Promise<PreparedTool> {
  const tool = input.path
  const fail = (code: string, field: string, reason: string): never => {
    throw new LoadingError(code, { tool, field, reason })
  }
  const declared = input.runtime

  let envdir: string | undefined
  if (declared.envdir !== undefined) {
    if (options.envdirRoot === undefined) {
      fail(
        'RUNTIME_ERR_ENVDIR',
        '$.runtime.envdir',
        'declared, but no envdir root is configured: start toolvisor with --envdir-root DIR',
      )
    }
    envdir = join(options.envdirRoot as string, declared.envdir)
    if (!isDirectory(envdir)) {
      fail(
        'RUNTIME_ERR_ENVDIR',
        '$.runtime.envdir',
        `${envdir} is not a directory: create it under the envdir root`,
      )
    }
  }

  let rundir: string | undefined
  if (declared.rundir !== undefined) {
    rundir = resolve(input.dir, declared.rundir)
    if (!isInside(rundir, input.dir)) {
      fail(
        'RUNTIME_ERR_RUNDIR',
        '$.runtime.rundir',
        `"${declared.rundir}" leads outside the tool's directory`,
      )
    }
    try {
      mkdirSync(rundir, { recursive: true })
    } catch (error) {
      fail('RUNTIME_ERR_RUNDIR', '$.runtime.rundir', `cannot create ${rundir}: ${(error as Error).message}`)
    }
  }

  let runAs: PreparedTool['runAs']
  const runAsMechanism = declared.runAs === undefined ? undefined : options.runAs
  if (declared.runAs !== undefined) {
    if (runAsMechanism === undefined) {
      fail(
        'RUNTIME_ERR_RUN_AS',
        '$.runtime.run_as',
        'declared, but no run_as mechanism is configured: start toolvisor with --run-as setpriv',
      )
    }
    const mechanism = launchers.runAs(runAsMechanism as string)
    if (mechanism === undefined) {
      fail(
        'RUNTIME_ERR_RUN_AS',
        '$.runtime.run_as',
        `the run_as mechanism "${runAsMechanism}" is not available`,
      )
    }
    const verdict = await (mechanism as NonNullable<typeof mechanism>).qualify(declared.runAs)
    if (!verdict.ok) fail('RUNTIME_ERR_RUN_AS', '$.runtime.run_as', withFix(verdict))
    runAs = { target: declared.runAs, mechanism: mechanism as NonNullable<typeof mechanism> }
  }

  let sandbox: PreparedTool['sandbox']
  if (declared.sandbox !== undefined) {
    if (options.sandbox === undefined) {
      fail(
        'RUNTIME_ERR_SANDBOX',
        '$.runtime.sandbox',
        'declared, but no sandbox mechanism is configured: start toolvisor with --sandbox bwrap, landlock or auto',
      )
    }
    const policy = resolvePolicy(input, fail)
    const mechanism = await chooseMechanism(options.sandbox as string, policy, runAs?.target, launchers, fail)
    sandbox = { mechanism, policy }
    if (runAs !== undefined && mechanism.handlesRunAs) runAs = { target: runAs.target }
  }

  return {
    path: input.path,
    dir: input.dir,
    name: input.slug,
    process: input.process,
    runtime: input.runtime,
    ...(sandbox ? { sandbox } : {}),
    ...(runAs ? { runAs } : {}),
    ...(envdir ? { envdir } : {}),
    ...(rundir ? { rundir } : {}),
  }
}

function resolvePolicy(
  input: PrepareInput,
  fail: (code: string, field: string, reason: string) => never,
): SandboxPolicy {
  const declaration = input.runtime.sandbox!
  const toolDir = realpathSync(input.dir)
  const resolveList = (list: readonly string[], kind: 'read' | 'write') =>
    list.map((path, i) => {
      const field = `$.runtime.sandbox.fs.${kind}[${i}]`
      const absolute = resolve(input.dir, path)
      let real: string
      try {
        real = realpathSync(absolute)
      } catch {
        return fail(
          'RUNTIME_ERR_SANDBOX_PATH',
          field,
          `"${path}" does not exist (${absolute}); create it or remove it`,
        )
      }
      // A relative path declares a place in the tool's own tree: a symlink out of it would grant
      // something else than what the tool declared.
      if (!isAbsolute(path) && !isInside(real, toolDir)) {
        return fail(
          'RUNTIME_ERR_SANDBOX_PATH',
          field,
          `"${path}" is a symlink to ${real}, outside the tool's directory; declare the target itself`,
        )
      }
      return real
    })
  return {
    toolDir,
    executable: realpathSync(input.path),
    read: resolveList(declaration.fs.read, 'read'),
    write: resolveList(declaration.fs.write, 'write'),
    net: declaration.net,
    tmp: declaration.tmp,
    declared: [...declaration.declared, ...(input.runtime.runAs ? (['run_as'] as const) : [])],
  }
}

async function chooseMechanism(
  name: string,
  policy: SandboxPolicy,
  runAs: RunAsTarget | undefined,
  launchers: Launchers,
  fail: (code: string, field: string, reason: string) => never,
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

async function safeQualify(
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

function fieldPath(field: SandboxField | 'mechanism'): string {
  if (field === 'mechanism') return '$.runtime.sandbox'
  if (field === 'run_as') return '$.runtime.run_as'
  return `$.runtime.sandbox.${field}`
}

function withFix(verdict: Extract<Qualification, { ok: false }>): string {
  return verdict.fix ? `${verdict.reason} (fix: ${verdict.fix})` : verdict.reason
}

function known(launchers: Launchers): string {
  const names = launchers.sandboxes().map((m) => m.name)
  return names.length > 0 ? names.join(', ') : 'none'
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}
