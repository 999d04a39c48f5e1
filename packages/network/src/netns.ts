import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Launch } from '@toolvisor/launchers'
import { nativeProblem } from '@toolvisor/process-runtime'

/**
 * `toolvisor-netns`, the program that starts a launch in a fresh network namespace bridged to the
 * proxy, as this package's build compiled it (`dist/native/`, from `src/` and from `dist/` alike).
 */
export const builtNetnsHelper = fileURLToPath(new URL('../dist/native/toolvisor-netns', import.meta.url))

/** The inner port the bridge listens on inside the namespace (127.0.0.1 and, where IPv6 works, [::1]). */
export const NAMESPACE_PROXY_PORT = 3128

/** What {@link netnsHelperStatus} says: the helper's path, and when it cannot run, why and the fix. */
export type NetnsHelperStatus =
  | {
      /** It can run. */
      readonly available: true
      /** Where it is. */
      readonly path: string
    }
  | {
      /** It cannot run here. */
      readonly available: false
      /** Where it was looked for. */
      readonly path: string
      /** Why it cannot run (`toolvisor-netns is missing: ...`). */
      readonly reason: string
      /** What to do about it. */
      readonly fix: string
    }

const rebuild = 'install a C compiler (apt-get install gcc) and rebuild @toolvisor/network'

/**
 * Whether `toolvisor-netns` at `path` (default: the one built here) can run, and if not why: the
 * reason and fix its build recorded (`UNAVAILABLE` beside it), or that it was never built.
 */
export function netnsHelperStatus(path: string = builtNetnsHelper): NetnsHelperStatus {
  const missing = nativeProblem(path)
  if (missing === undefined) return { available: true, path }
  // Without a record of this package's build, process-runtime's default fix would name that package.
  const recorded = existsSync(join(dirname(path), 'UNAVAILABLE'))
  return {
    available: false,
    path,
    reason: `toolvisor-netns is missing: ${missing.reason}`,
    fix: recorded ? missing.fix : rebuild,
  }
}

/** A port published from inside the namespace: the host's `127.0.0.1:host` reaches `127.0.0.1:inner` inside. */
export interface PublishedPort {
  /** The port on the host's 127.0.0.1 (1 to 65535; must be free when the launch starts). */
  readonly host: number
  /** The port a server inside listens on, at 127.0.0.1 in the namespace. */
  readonly inner: number
}

/** Options of {@link inNetworkNamespace}. */
export interface NetworkNamespaceOptions {
  /** The proxy's unix socket (an absolute path of at most 107 bytes, resolved on the host). */
  readonly proxy: string
  /** The `toolvisor-netns` to run (see {@link netnsHelperStatus}). */
  readonly helper: string
  /** Host ports bridged to ports inside (default none). */
  readonly publish?: readonly PublishedPort[]
  /**
   * `proxy` is a gate of this package's proxy (`createProxy`), which may hand an approved CONNECT
   * to the bridge: the bridge then connects to the target itself, from the host's network
   * namespace, and carries the tunnel's bytes without the proxy (`toolvisor-netns --handoff`,
   * decision 0111). Default false: the bridge carries every byte to `proxy`, whatever proxy it is.
   */
  readonly handoff?: boolean
}

/**
 * `launch` rewritten to start inside a fresh network namespace holding only `lo`, where
 * `127.0.0.1:`{@link NAMESPACE_PROXY_PORT} is bridged to `proxy` and each published host port to
 * its inner port. Outermost: the helper runs first, with the launch's clean environment, and execs
 * the launch's own file (absolute, or `/proc/self/fd/N` of its `extraFds`) with its arguments; its
 * `extraFds`, `env` and everything else pass unchanged, only `file` and `args` change. A launch the
 * helper cannot set up exits 125 with one line on stderr (`toolvisor-netns: what: why`), without
 * running anything.
 */
export function inNetworkNamespace(launch: Launch, options: NetworkNamespaceOptions): Launch {
  const publish = (options.publish ?? []).flatMap((port) => ['--publish', `${port.host}:${port.inner}`])
  return {
    ...launch,
    file: options.helper,
    args: [
      '--proxy',
      options.proxy,
      '--port',
      String(NAMESPACE_PROXY_PORT),
      ...(options.handoff === true ? ['--handoff'] : []),
      ...publish,
      '--',
      launch.file,
      ...launch.args,
    ],
  }
}
