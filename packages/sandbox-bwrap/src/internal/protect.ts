import type { ExtraFd, ProtectedTarget } from '@toolvisor/launchers'
import type { Mount } from './args.js'

/**
 * The mounts that keep a launch's protected paths read-only (decision 0096; which ones, and how
 * each is found, is `protectedTargets`'):
 * - there: bound read-only over itself, from a descriptor pinned when the launch was planned (a
 *   swap before the start is refused, as a grant's is);
 * - missing: masked so that it cannot be created, an empty read-only tmpfs where a directory would
 *   be, an empty read-only file where a file would be (`--ro-bind-data`). bwrap makes the mount
 *   point in the grant, on the host (the mechanism's `Placeholders` remove it after the run).
 * A write there fails with EROFS, as any denied write under bwrap does.
 */
export function protectMounts(targets: readonly ProtectedTarget[]): Mount[] {
  return targets.map((target): Mount => {
    const { path } = target
    if (target.state === 'there') {
      const fd: ExtraFd = target.pin ? { kind: 'file', path, pin: target.pin } : { kind: 'file', path }
      return { path, args: [], host: true, from: { flag: '--ro-bind-fd', fd } }
    }
    if (target.kind === 'dir') {
      return { path, args: ['--perms', '0555', '--tmpfs', path, '--remount-ro', path], host: false }
    }
    const fd: ExtraFd = { kind: 'data', data: new Uint8Array(0) }
    return { path, args: [], host: false, from: { flag: '--ro-bind-data', fd } }
  })
}
