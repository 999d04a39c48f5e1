import { realpathSync, statSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import type { SandboxDeclaration } from '@toolvisor/describe-v2'
import type { Pin, RuntimeErrorCode, SandboxField, SandboxPolicy } from '@toolvisor/launchers'
import { typeDescription, typeOf } from './grant-type.js'

/** Throws the LoadingError of one field (see `prepare.ts`). */
export type Fail = (code: RuntimeErrorCode, field: string, reason: string) => never

/** Kernel interfaces no write grant may reach, whatever the mechanism and the user. */
const NEVER_WRITABLE = ['/proc', '/sys']

/**
 * A sandbox declaration after load: paths realpath'd (relative ones against the tool's
 * directory), each pinned to its identity on disk so that every start can check it still is what
 * was qualified. A relative path that links out of the tool's directory, a missing path and a
 * write grant at or under /proc or /sys are refused, naming the field.
 */
export function resolvePolicy(
  tool: { readonly path: string; readonly dir: string },
  declaration: SandboxDeclaration,
  declaredRunAs: boolean,
  fail: Fail,
): SandboxPolicy {
  const toolDir = realpathSync(tool.dir)
  const executable = realpathSync(tool.path)
  const pins: Record<string, Pin> = {}
  pin(pins, toolDir, "the tool's directory")
  pin(pins, executable, "the tool's executable")
  const resolveList = (list: readonly string[], kind: 'read' | 'write') =>
    list.map((path, i) => {
      const field = `$.runtime.sandbox.fs.${kind}[${i}]`
      const real = realGrant({ path, field, kind, dir: tool.dir, toolDir }, fail)
      pin(pins, real, field)
      return real
    })
  return {
    toolDir,
    executable,
    read: resolveList(declaration.fs.read, 'read'),
    write: resolveList(declaration.fs.write, 'write'),
    net: declaration.net,
    tmp: declaration.tmp,
    declared: [...declaration.declared, ...(declaredRunAs ? (['run_as'] as const) : [])],
    pins,
  }
}

/** One declared grant, realpath'd, or its refusal (see `resolvePolicy`). */
function realGrant(
  grant: {
    readonly path: string
    readonly field: string
    readonly kind: 'read' | 'write'
    readonly dir: string
    readonly toolDir: string
  },
  fail: Fail,
): string {
  const { path, field } = grant
  const absolute = resolve(grant.dir, path)
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
  if (!isAbsolute(path) && !isInside(real, grant.toolDir)) {
    return fail(
      'RUNTIME_ERR_SANDBOX_PATH',
      field,
      `"${path}" is a symlink to ${real}, outside the tool's directory; declare the target itself`,
    )
  }
  const kernel = NEVER_WRITABLE.find((root) => isInside(real, root))
  if (grant.kind === 'write' && kernel !== undefined) {
    return fail(
      'RUNTIME_ERR_SANDBOX_PATH',
      field,
      `"${path}" is under ${kernel}, which is never writable inside a sandbox (kernel settings: writing there changes the host)`,
    )
  }
  // O_PATH makes a FIFO or a device harmless to refer to, but nothing a grant means (a tree to
  // bind or to rule) is one: refused here rather than at every start.
  const type = typeOf(statSync(real))
  if (type !== undefined) {
    return fail(
      'RUNTIME_ERR_SANDBOX_PATH',
      field,
      `"${path}" is ${typeDescription(type)} (${real}); a grant is a directory or a regular file: grant the directory that holds it, or remove it`,
    )
  }
  return real
}

/**
 * The confining policy `describe` and `help` run under when a mechanism is configured: the tool's
 * directory readable, nothing writable, no network, no /tmp of the host.
 */
export function confiningPolicy(path: string, tmp: 'private' | 'none'): SandboxPolicy {
  const toolDir = realpathSync(resolve(path, '..'))
  const executable = realpathSync(path)
  const pins: Record<string, Pin> = {}
  pin(pins, toolDir, "the tool's directory")
  pin(pins, executable, "the tool's executable")
  return { toolDir, executable, read: [], write: [], net: 'none', tmp, declared: ['net', 'tmp'], pins }
}

/** `<device>:<inode>` of a path, symlinks followed. */
export function identityOf(path: string): string {
  const stat = statSync(path, { bigint: true })
  return `${stat.dev}:${stat.ino}`
}

function pin(pins: Record<string, Pin>, path: string, field: string): void {
  pins[path] ??= { identity: identityOf(path), field }
}

/** Whether `path` is `dir` or lies below it. */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

/** The JSON path of a field of a sandbox declaration, for errors. */
export function fieldPath(field: SandboxField | 'mechanism'): string {
  if (field === 'mechanism') return '$.runtime.sandbox'
  if (field === 'run_as') return '$.runtime.run_as'
  return `$.runtime.sandbox.${field}`
}
