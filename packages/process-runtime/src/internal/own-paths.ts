/**
 * toolvisor's own paths, which no sandbox may reach (issue 26 point 1, decision 0095): the state
 * directory (run records, spill files of every session, the mail journal, `serve.token`), the
 * envdir root (every tool's secrets), what the host adds (a token file elsewhere, the listener's
 * socket, the configuration file) and the installation (the code toolvisor and its helpers run
 * from, some of it as root).
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { OwnPath, SandboxPolicy } from '@toolvisor/launchers'
import { type AccessNeed, type Account, missingAccess } from '@toolvisor/run-as'
import { type Fail, isInside } from './policy.js'

/** A path of the host's own, as a host hands it to the runtime (`RuntimeOptions.ownPaths`). */
export interface OwnPathOption {
  readonly path: string
  /** `secret`: never visible nor writable from a sandbox; `code`: never writable. */
  readonly kind: OwnPath['kind']
  /** What it is, as an error names it ("toolvisor serve's bearer token"). */
  readonly what: string
}

/**
 * The code of toolvisor's installation, from where this package lies: the `@toolvisor` scope
 * directory when installed (every package of it, with their native helpers); in a workspace
 * checkout, what of each `@toolvisor/...` package toolvisor runs (its `dist`, its `package.json`,
 * its `node_modules`) and the workspace's `node_modules`, not the sources and tests beside them
 * (decision 0095: rebuilding from sources a tool changed is the developer's own step).
 */
export function installation(): string[] {
  let self: string
  try {
    self = realpathSync(fileURLToPath(new URL('../..', import.meta.url)))
  } catch {
    return []
  }
  const parent = dirname(self)
  if (basename(parent) === '@toolvisor') return [parent]
  const packages = entries(parent).filter((dir) => nameOf(dir)?.startsWith('@toolvisor/'))
  const code = (packages.length > 0 ? packages : [self]).flatMap((dir) =>
    ['dist', 'package.json', 'node_modules'].map((part) => join(dir, part)),
  )
  return [...code, join(dirname(parent), 'node_modules')].filter((path) => existsSync(path))
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).map((name) => join(dir, name))
  } catch {
    return []
  }
}

function nameOf(dir: string): string | undefined {
  try {
    const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }
    return typeof name === 'string' ? name : undefined
  } catch {
    return undefined
  }
}

/**
 * A path as it is on disk: its realpath, or, while it does not exist yet (a socket the host will
 * listen on), the realpath of its nearest existing ancestor with the rest appended.
 */
export function resolvedOwn(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    const parent = dirname(path)
    return parent === path ? path : join(resolvedOwn(parent), basename(path))
  }
}

/** Every own path of a runtime: its state dir, its envdir root, its installation, and the host's. */
export function ownPathsOf(options: {
  readonly stateDir: string
  readonly envdirRoot?: string | undefined
  readonly ownPaths?: readonly OwnPathOption[] | undefined
}): OwnPath[] {
  const listed: OwnPathOption[] = [
    { path: options.stateDir, kind: 'secret', what: "toolvisor's state directory" },
    ...(options.envdirRoot === undefined
      ? []
      : [
          {
            path: options.envdirRoot,
            kind: 'secret' as const,
            what: "the envdir root (every tool's secrets)",
          },
        ]),
    ...installation().map((path) => ({ path, kind: 'code' as const, what: "toolvisor's installation" })),
    ...(options.ownPaths ?? []),
  ]
  const seen = new Set<string>()
  const own: OwnPath[] = []
  for (const entry of listed) {
    const path = resolvedOwn(entry.path)
    if (seen.has(`${entry.kind}:${path}`)) continue
    seen.add(`${entry.kind}:${path}`)
    own.push({ path, kind: entry.kind, what: entry.what })
  }
  // What lies inside a secret is out of reach with it (the token in the state directory).
  return own.filter(
    (entry) =>
      !own.some(
        (outer) => outer.kind === 'secret' && outer.path !== entry.path && isInside(entry.path, outer.path),
      ),
  )
}

/** How a grant meets an own path: it is the path or lies below it, or it holds the path below it. */
export function overlap(grant: string, own: string): 'at-or-under' | 'above' | undefined {
  if (isInside(grant, own)) return 'at-or-under'
  if (isInside(own, grant)) return 'above'
  return undefined
}

/**
 * The own paths `account` could reach by their file modes alone (read or search a secret, write
 * the code): what a mechanism must keep out of sight or read-only. One the user cannot reach is
 * kept out by the kernel's permission checks already (a tool runs with no capability, under every
 * mechanism), and leaving it to them costs a launch nothing.
 */
export async function reachableOwn(account: Account, own: readonly OwnPath[]): Promise<OwnPath[]> {
  const needs: Array<AccessNeed & { readonly index: number }> = own.flatMap((entry, index) =>
    entry.kind === 'secret'
      ? [
          { path: entry.path, mode: 'r', index },
          { path: entry.path, mode: 'x', index },
        ]
      : [{ path: entry.path, mode: 'w', index }],
  )
  const missing = new Set(await missingAccess(account, needs))
  const reached = new Set(needs.filter((need) => !missing.has(need)).map((need) => need.index))
  return own.filter((_, index) => reached.has(index))
}

/** A grant as `refuseOwn` checks it. */
interface Grant {
  readonly path: string
  readonly field: string
  /** How an error names it ("$.runtime.sandbox.fs.read[1]" names itself). */
  readonly label: string
  readonly writable: boolean
}

/**
 * Refuses a policy whose grants reach toolvisor's own paths (decision 0095): a grant at or under a
 * secret (the state directory, a token file, the envdir root...), a writable grant at or under the
 * installation, and, unless the operator's policy asks for them to be masked (`around: 'mask'`:
 * a bash mode reads `/`), a grant above either. Masked ones are the mechanism's to keep out.
 */
export function refuseOwn(
  policy: Pick<SandboxPolicy, 'toolDir' | 'executable' | 'read' | 'write'>,
  own: readonly OwnPath[],
  around: 'refuse' | 'mask',
  fail: Fail,
): void {
  const grants: Grant[] = [
    { path: policy.toolDir, field: '$.runtime.sandbox', label: "the tool's directory ", writable: false },
    { path: policy.executable, field: '$.runtime.sandbox', label: "the tool's executable ", writable: false },
    ...policy.read.map((path, i) => ({
      path,
      field: `$.runtime.sandbox.fs.read[${i}]`,
      label: '',
      writable: false,
    })),
    ...policy.write.map((path, i) => ({
      path,
      field: `$.runtime.sandbox.fs.write[${i}]`,
      label: '',
      writable: true,
    })),
  ]
  for (const grant of grants) {
    for (const entry of own) {
      const meets = overlap(grant.path, entry.path)
      if (meets === undefined) continue
      if (entry.kind === 'code' && !grant.writable) continue
      if (meets === 'above' && around === 'mask') continue
      const where =
        meets === 'above'
          ? `holds ${entry.path}, ${entry.what}`
          : grant.path === entry.path
            ? `is ${entry.what}`
            : `lies in ${entry.path}, ${entry.what}`
      const why =
        entry.kind === 'secret'
          ? "nothing of toolvisor's own is visible from a sandbox"
          : 'a tool that could write it would change the code toolvisor runs'
      fail(
        'RUNTIME_ERR_OWN_PATH',
        grant.field,
        `${grant.label}${grant.path} ${where}: ${why}; grant narrower paths that leave it out${entry.kind === 'secret' ? ', or run toolvisor with its state elsewhere (--state-dir)' : ''}`,
      )
    }
  }
}
