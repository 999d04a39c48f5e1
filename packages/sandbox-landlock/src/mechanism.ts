import type {
  ExtraFd,
  Launch,
  MechanismDescription,
  NetworkRoute,
  Placeholder,
  Qualification,
  RunAsTarget,
  SandboxMechanism,
  SandboxPolicy,
} from '@toolvisor/launchers'
import { executableFd, grantFd, isAllowList, Placeholders, protectedTargets } from '@toolvisor/launchers'
import { type FilterOptions, syscallFilter } from '@toolvisor/syscall-filter'
import { LandlockError } from './errors.js'
import { describeStatus } from './internal/describe.js'
import { builtLauncher, type LauncherStatus, probeLauncher, probeLauncherSync } from './internal/launcher.js'
import { type ExecMinimum, execMinimum, launcherArgs, refusal } from './internal/policy.js'
import { preflight } from './internal/preflight.js'

/** Options of {@link landlockMechanism}. */
export interface LandlockOptions {
  /** The launcher to run; default: the one this package's build compiled (`dist/native/landlock-launcher`). */
  readonly launcher?: string
}

/**
 * The `landlock` sandbox mechanism: the tool is spawned through a small native launcher that
 * restricts it with Landlock and the syscall allowlist of `@toolvisor/syscall-filter` (given on
 * a descriptor: no unix socket, namespace, keyring or SysV IPC; no socket at all for `net: none`)
 * and switches to the run_as or sandbox user. A network allow list takes the `port` route: TCP
 * sockets only, connect to the proxy's port and bind to the published ports only (Landlock's TCP
 * rules, ABI 4); it has no network namespace, so `describe()` states what that leaves open. The
 * spawned process stands in for the tool (it ends as the tool ends, with its code or signal); the
 * tool runs in its process group, so the runtime's group signal reaches its own TERM handler and
 * no `control` is needed. What the tool starts cannot outlive it: a pid namespace per run where
 * one can be made (probed once), else a child subreaper that kills what is left.
 *
 * @example
 * ```ts
 * const landlock = landlockMechanism()
 * const answer = await landlock.qualify(policy, runAs)
 * if (!answer.ok) throw new Error(`${answer.field}: ${answer.reason}`)
 * const { file, args, env, cwd } = landlock.wrap(launch, policy, runAs)
 * spawn(file, args, { env, cwd, detached: true })
 * ```
 */
export function landlockMechanism(options: LandlockOptions = {}): SandboxMechanism {
  return new Landlock(options.launcher ?? builtLauncher)
}

class Landlock implements SandboxMechanism {
  readonly name = 'landlock'
  readonly handlesRunAs = true
  readonly netRoute = 'port'
  readonly #launcher: string
  #status: LauncherStatus | undefined
  #probing: Promise<LauncherStatus> | undefined
  #minimum: ExecMinimum | undefined
  /** The placeholders of protected paths that launches of this mechanism have (the launcher makes them). */
  readonly #placeholders = new Placeholders()
  readonly #programs = new Map<FilterOptions['net'], Uint8Array>()

  constructor(launcher: string) {
    this.#launcher = launcher
  }

  async qualify(policy: SandboxPolicy, runAs: RunAsTarget | undefined): Promise<Qualification> {
    const found = await this.#probe()
    const refused = refusal(policy, runAs, found, process.geteuid?.(), this.#exec())
    if (!refused.ok || !found.available) return refused
    // The preflight has no gate: any port sets the rules up the same way (a connect it never makes).
    const network: NetworkRoute | undefined = isAllowList(policy.net)
      ? { kind: 'port', port: 1, publish: policy.net.publish }
      : undefined
    const args = launcherArgs(policy, runAs, found, this.#exec(), network === undefined ? {} : { network })
    return preflight(found.launcher, args, policy, this.#program(policy))
  }

  wrap(launch: Launch, policy: SandboxPolicy, runAs: RunAsTarget | undefined): Launch {
    this.#status ??= probeLauncherSync(this.#launcher)
    const found = this.#status
    const refused = refusal(policy, runAs, found, process.geteuid?.(), this.#exec())
    if (!refused.ok) {
      const code = refused.field === 'mechanism' ? 'LANDLOCK_ERR_UNAVAILABLE' : 'LANDLOCK_ERR_REFUSED'
      const fix = refused.fix === undefined ? '' : `; fix: ${refused.fix}`
      throw new LandlockError(
        code,
        `cannot run ${policy.executable} under Landlock: ${refused.field}: ${refused.reason}${fix}`,
      )
    }
    if (!found.available) throw new Error('unreachable: refusal() refuses an unavailable launcher')
    // An allow list is confined to the proxy's port: without one the tool would get every port.
    if (isAllowList(policy.net) && launch.network?.kind !== 'port') {
      const has = launch.network === undefined ? 'none' : `a ${launch.network.kind} route`
      throw new LandlockError(
        'LANDLOCK_ERR_NETWORK',
        `the network allow list of ${policy.executable} needs the port of the runtime's proxy (a launch network route of kind port), and this launch has ${has}: not started`,
      )
    }
    // Grants become rules on descriptors the runtime opens and checks at each start.
    const extraFds: ExtraFd[] = [...launch.extraFds]
    // Protected paths are kept in the launcher's mount namespace, where the probe found one.
    const targets = found.pidNamespace.available ? protectedTargets(policy, this.#placeholders.held) : []
    const grants = {
      descriptor(path: string) {
        extraFds.push(grantFd(policy, path))
        return 2 + extraFds.length
      },
    }
    const network = launch.network === undefined ? {} : { network: launch.network }
    const args = launcherArgs(policy, runAs, found, this.#exec(), { grants, protect: targets, ...network })
    const held = this.#placeholders.hold(targets, launch.release)
    // The final exec stage runs from a descriptor: allow executing what it holds.
    const stage = executableFd(launch)
    const execFd = stage === undefined ? [] : ['--exec-fd', String(stage)]
    // The filter travels like bwrap's --seccomp program: a data descriptor the launcher reads whole.
    const seccompFd = ['--seccomp-fd', String(3 + extraFds.length)]
    extraFds.push({ kind: 'data', data: this.#program(policy) })
    return {
      ...launch,
      file: found.launcher,
      args: [...seccompFd, ...execFd, ...args, launch.file, ...launch.args],
      extraFds,
      ...held,
    }
  }

  holdPlaceholders(placeholders: readonly Placeholder[]): () => void {
    return this.#placeholders.again(placeholders)
  }

  async describe(): Promise<MechanismDescription> {
    return describeStatus('landlock', await this.#probe(), this.#exec())
  }

  /** What the launcher says of this kernel, asked once. */
  #probe(): Promise<LauncherStatus> {
    if (this.#status !== undefined) return Promise.resolve(this.#status)
    this.#probing ??= probeLauncher(this.#launcher).then((found) => {
      this.#status ??= found
      return this.#status
    })
    return this.#probing
  }

  /**
   * The syscall filter for the policy's `net` (ipc: host, Landlock has no IPC namespace): no
   * socket for `none`, TCP only for an allow list (`stream`: the TCP rules hold it to the proxy's
   * port; UDP and DNS would pass them), TCP and UDP for `host`. Built once per variant; each launch
   * gets its own copy of the bytes.
   */
  #program(policy: SandboxPolicy): Uint8Array {
    const net: FilterOptions['net'] = isAllowList(policy.net) ? 'stream' : policy.net
    let program = this.#programs.get(net)
    if (program === undefined) {
      program = syscallFilter({ net, ipc: 'host' })
      this.#programs.set(net, program)
    }
    return program.slice()
  }

  #exec(): ExecMinimum {
    this.#minimum ??= execMinimum()
    return this.#minimum
  }
}
