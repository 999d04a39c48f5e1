import { fileURLToPath } from 'node:url'
import { nativeProblem, nodeSpawner, type Spawner, type SpawnerFacts } from '@toolvisor/process-runtime'
import { forkServer } from './fork-servers.js'
import { StagedWriter } from './internal/spill-direct.js'

/**
 * `toolvisor-spawnd`, the fork server, as this package's build compiled it (its own directory:
 * its own `UNAVAILABLE` record when it could not be built).
 */
export const builtForkServer = fileURLToPath(
  new URL('../dist/native/fork-server/toolvisor-spawnd', import.meta.url),
)

/** Options of {@link nativeSpawner}. */
export interface NativeSpawnerOptions {
  /**
   * The fork server to fork launches from (default: the one built here); `false`, or
   * `TOOLVISOR_FORK_SERVER=off`: none, launches are spawned from this process.
   */
  readonly forkServer?: string | false
}

/**
 * The fork server launches go through, or why none: `option` is `NativeSpawnerOptions.forkServer`
 * (`false`: turned off, as `TOOLVISOR_FORK_SERVER=off` does; a path; undefined: the built one).
 */
export function forkServerStatus(option: string | false | undefined): SpawnerFacts {
  if (option === false) return { available: false, reason: 'turned off (forkServer: false)' }
  if (process.env.TOOLVISOR_FORK_SERVER === 'off')
    return { available: false, reason: 'turned off (TOOLVISOR_FORK_SERVER=off)' }
  const path = option ?? builtForkServer
  const missing = nativeProblem(path)
  if (missing === undefined) return { available: true, path }
  return { available: false, reason: `toolvisor-spawnd is missing: ${missing.reason}` }
}

/**
 * The native launch path as a `Spawner` (decision 0107): launches forked from `toolvisor-spawnd`
 * (decision 0082), one per process and binary, started now (while a host is usually still small,
 * so no call pays for it) and again after it died; each child placed in its cgroups and its
 * rlimits set before its exec (decision 0097); bulk stdout read into slabs and spilled in O_DIRECT
 * stages (decision 0083). Without a fork server (turned off, or not built here) launches are
 * spawned from this process, as `nodeSpawner` does, and the facts say why; the spill stages stay.
 */
export function nativeSpawner(options: NativeSpawnerOptions = {}): Spawner {
  const facts = forkServerStatus(options.forkServer)
  const spillStages = (fd: number) => StagedWriter.open(fd)
  if (!facts.available) return { facts, launch: nodeSpawner.launch, spillStages }
  const binary = facts.path
  forkServer(binary)
  const server = () => forkServer(binary)
  return {
    facts,
    // A server that can no longer be started (its binary gone meanwhile): from this process.
    launch: (launch, spawnOptions) =>
      server()?.launch(launch, spawnOptions) ?? nodeSpawner.launch(launch, spawnOptions),
    placement: server,
    spillStages,
  }
}
