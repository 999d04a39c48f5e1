import type { Readable } from 'node:stream'
import type { NetPolicy, NetworkRoute } from './net-policy.js'
import type { Placeholder } from './placeholder.js'

/**
 * The `launchers` seam: how a process gets wrapped by a sandbox mechanism and a run_as mechanism
 * before it is spawned. There is exactly one way a process gets sandboxed: the runtime asks the
 * mechanism chosen at load to `wrap` the launch, then spawns what comes back.
 */

/** What Node's `spawn` receives. Mechanisms rewrite it; they never spawn anything themselves. */
export interface Launch {
  /** The executable to spawn (absolute, or `/proc/self/fd/N` for a descriptor of `extraFds`). */
  readonly file: string
  /** Its arguments (not including `file`). */
  readonly args: readonly string[]
  /**
   * The environment `file` is started with. The runtime hands mechanisms a launch whose
   * environment is already the fixed clean one ({@link CLEAN_ENVIRONMENT}): the tool's own
   * environment travels inside it, on a descriptor, to the final exec (`toolvisor-exec`), so a
   * privileged helper (bwrap, a launcher, setpriv) never runs with a variable the tool declared.
   */
  readonly env: Readonly<Record<string, string>>
  /** The working directory. */
  readonly cwd: string
  /** Extra file descriptors for the child, numbered from 3 in order. */
  readonly extraFds: readonly ExtraFd[]
  /**
   * Called once, after the launched process ended or failed to start: undoes what the mechanism
   * leaves on the host for this launch (the placeholders that keep a protected path from being
   * created, `SandboxPolicy.protect`). A wrapper keeps it (`{ ...launch, file, args }`).
   */
  readonly release?: () => void
  /**
   * The placeholders this launch may make on the host (`release` removes them): recorded in the
   * run's log before the spawn, so that, should toolvisor die without releasing them, its watchdog
   * (or the next start) removes them once their processes are killed.
   */
  readonly placeholders?: readonly Placeholder[]
  /**
   * The v2 cgroup the launched process is born in, and the `cgroup.procs` files (a hybrid host's
   * v1 hierarchies) it joins before its exec, so that everything it starts is inside (the
   * runtime's containment, decision 0097). A wrapper keeps them.
   */
  readonly cgroupDir?: string
  readonly cgroups?: readonly string[]
  /** The resource limits set before its exec (inherited by everything it starts). */
  readonly rlimits?: readonly Rlimit[]
  /**
   * A pseudo-terminal of this size on descriptors 0, 1 and 2 instead of pipes: the controlling
   * terminal of the child's session (issue 31). The spawned child's `stdin` writes to it and its
   * `stdout` reads what the child writes to it (stdout and stderr both, as a terminal shows them);
   * it has no `stderr`. Only a spawner that can make one honours it; another refuses the launch.
   */
  readonly terminal?: TerminalSize
  /**
   * How this launch reaches the network when its policy is an allow list (issue 32): the proxy
   * gate the runtime opened for it. A mechanism that honours an allow list confines the launch to
   * it (see {@link SandboxMechanism.netRoute}) or throws; it never runs the launch with the host's
   * network instead.
   */
  readonly network?: NetworkRoute
}

/** The size of a terminal, in character cells. */
export interface TerminalSize {
  readonly columns: number
  readonly rows: number
}

/** One resource limit: `resource` is the kernel's `RLIMIT_*` number; `Infinity` is unlimited. */
export interface Rlimit {
  readonly resource: number
  readonly soft: number
  readonly hard: number
}

export type { Placeholder }

/**
 * An extra descriptor: `pipe` gives the mechanism a stream it reads after spawn (bwrap's
 * `--info-fd`); `data` is written to the child then closed (a seccomp program); `exchange` is
 * written to the child (its write side then closed) and read after spawn: the child answers on the
 * same descriptor (the final exec stage: the tool's environment in, a failed exec out); `file` is a
 * path the runtime refers to at spawn by an O_PATH descriptor (it opens nothing and follows no
 * symlink: the path must be real, as load makes every grant) and passes as the descriptor itself (a
 * grant bwrap binds with `--bind-fd`, a Landlock rule, the final exec stage run through
 * `/proc/self/fd/N`; read it by opening `/proc/self/fd/N`), after checking it is a directory or a
 * regular file and still the object qualified at load (`pin`): a grant swapped for a symlink, a
 * FIFO, a device or anything else is refused, naming its field, and the tool is not started.
 */
export type ExtraFd =
  | { readonly kind: 'pipe' }
  | { readonly kind: 'data'; readonly data: Uint8Array }
  | { readonly kind: 'exchange'; readonly data: Uint8Array }
  | { readonly kind: 'file'; readonly path: string; readonly pin?: Pin }

/** What a path was when it was qualified at load: its identity on disk and the field that declared it. */
export interface Pin {
  /** `<device>:<inode>` of the path (symlinks followed) at load. */
  readonly identity: string
  /** The declaration it comes from (`$.runtime.sandbox.fs.write[0]`, the tool's directory, ...). */
  readonly field: string
}

/** The fixed environment every wrapper (bwrap, a launcher, setpriv, runuser) is started with. */
export const CLEAN_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
})

/**
 * The descriptor a launch's executable is run from, when it is `/proc/self/fd/N` (the final exec
 * stage is): a mechanism that restricts exec by path (Landlock) must allow that file.
 */
export function executableFd(launch: Launch): number | undefined {
  const match = /^\/proc\/self\/fd\/(\d+)$/.exec(launch.file)
  return match === null ? undefined : Number(match[1])
}

/** A `file` descriptor for `path`, pinned to what the policy qualified at load when it did. */
export function grantFd(policy: SandboxPolicy, path: string): ExtraFd {
  // `?.`: a policy built by hand by a host that predates pins still wraps.
  const pin = policy.pins?.[path]
  return pin === undefined ? { kind: 'file', path } : { kind: 'file', path, pin }
}

/** A sandbox declaration after load: paths realpath'd, relative ones resolved against the tool's directory. */
export interface SandboxPolicy {
  /** The tool's directory (realpath): always readable. */
  readonly toolDir: string
  /** The executable itself (realpath). */
  readonly executable: string
  /** Paths granted read-only. */
  readonly read: readonly string[]
  /** Paths granted read-write. */
  readonly write: readonly string[]
  readonly net: NetPolicy
  /**
   * `shared`: the host's /tmp; `private`: a fresh one; `none`: no /tmp at all where the mechanism
   * cannot make a private one (never declared by a tool: the confining policy `describe` and
   * `help` run under asks for it).
   */
  readonly tmp: 'shared' | 'private' | 'none'
  /** The fields the tool actually declared (a mechanism must honour each of them or refuse). */
  readonly declared: readonly SandboxField[]
  /** What each granted path (the tool directory, its executable, fs.read, fs.write) was at load. */
  readonly pins: Readonly<Record<string, Pin>>
  /**
   * Paths kept read-only inside every writable grant (`write`), relative to the grant, a
   * directory ending in `/` (`.git/hooks/`, `.bashrc`): what the user's own programs run later,
   * unconfined, without being asked (git hooks, shell start-up files, editor tasks, agent client
   * configurations). One that is missing is masked so that it cannot be created. A mechanism that
   * cannot keep them says so in `describe()` (decision 0096). Absent: none.
   */
  readonly protect?: readonly string[]
  /**
   * Who the tool runs as (the run_as or sandbox user, else toolvisor's own): what it may create
   * follows from it (a protected path the user cannot create needs no mask). Absent: unknown.
   */
  readonly user?: { readonly uid: number; readonly gid: number; readonly groups: readonly number[] }
  /**
   * toolvisor's own paths the tool's user could reach by their file modes (decision 0095). No
   * declared grant is at or under one of them (refused at load); a grant of the policy may hold one
   * below it only for a policy the operator chose (a bash mode reads `/`), and the mechanism's own
   * base (`/usr`, `/etc`, a shared `/tmp`) may. The mechanism keeps each `secret` out of sight
   * (bwrap: masked; Landlock: left out of the rules) and each `code` path read-only, or refuses
   * the policy, naming the field, when it cannot. Absent (a policy built by hand): none.
   */
  readonly own?: readonly OwnPath[]
}

/** A path of toolvisor's own that a sandbox must never reach (see `SandboxPolicy.own`). */
export interface OwnPath {
  /** Absolute, symlinks resolved. */
  readonly path: string
  /**
   * `secret`: never visible nor writable (the state directory, a token file, the envdir root, the
   * listener's socket, the configuration); `code`: never writable (the installation).
   */
  readonly kind: 'secret' | 'code'
  /** What it is, for messages ("toolvisor's state directory"). */
  readonly what: string
}

/** A field of a sandbox declaration, as named in errors and reports. */
export type SandboxField = 'fs.read' | 'fs.write' | 'net' | 'tmp' | 'run_as'

/** Who the process runs as (`runtime.run_as`). */
export interface RunAsTarget {
  readonly user: string
  readonly group?: string
}

/** A mechanism's answer to "can you honour this declaration here?". */
export type Qualification =
  | { readonly ok: true }
  | {
      readonly ok: false
      readonly field: SandboxField | 'mechanism'
      readonly reason: string
      readonly fix?: string
    }

/** The child as a mechanism sees it right after spawn. */
export interface SpawnedChild {
  /** The pid of what was spawned (bwrap, or the launcher that exec'd into the tool). */
  readonly pid: number
  /** The `pipe` extra fds, by index in `extraFds` (undefined for `data` ones). */
  readonly extraFds: readonly (Readable | undefined)[]
}

/** How to deliver a signal to the tool itself once it runs under the mechanism. */
export interface ProcessControl {
  /** Delivers `signal` to the tool; returns false when it cannot (the runtime then signals the group). */
  signal(signal: NodeJS.Signals): boolean
}

/** What a mechanism enforces on this host and what it cannot, for `check --probe`. */
export interface MechanismDescription {
  readonly name: string
  /** Whether the mechanism works on this host now (found by running it). */
  readonly available: boolean
  /** Why it is unavailable, and the fix. */
  readonly unavailable?: { readonly reason: string; readonly fix: string }
  /** Per field, how it is enforced. */
  readonly enforces: Readonly<Partial<Record<SandboxField, string>>>
  /** Known gaps on this host (stated, never hidden). */
  readonly gaps: readonly string[]
}

/** A sandbox mechanism: one package against this seam (`bwrap`, `landlock`, a third party's). */
export interface SandboxMechanism {
  /** The name operators use (`--sandbox NAME`). */
  readonly name: string
  /** True when the mechanism switches to the run_as user itself; else the run_as mechanism wraps it. */
  readonly handlesRunAs: boolean
  /**
   * How it confines a launch whose `net` is an allow list to the proxy (see {@link NetworkRoute}):
   * `namespace` (it adds no network namespace of its own; the runtime's holds the launch) or
   * `port` (it lets the launch connect to the proxy's port only). Absent: it cannot, and its
   * `qualify` refuses an allow list.
   */
  readonly netRoute?: NetworkRoute['kind']
  /** Which declared fields it can honour here, found by running it (cached by the mechanism). */
  qualify(policy: SandboxPolicy, runAs: RunAsTarget | undefined): Promise<Qualification>
  /**
   * The launch rewritten to run under the mechanism. `launch` is the final exec stage (its
   * executable may be `/proc/self/fd/N`, see {@link executableFd}); its descriptors must reach it
   * unchanged, and what the mechanism adds runs with `launch.env`, the clean environment. Grants
   * are bound or ruled from descriptors ({@link grantFd}) so that what runs is what was qualified.
   */
  wrap(launch: Launch, policy: SandboxPolicy, runAs: RunAsTarget | undefined): Launch
  /** Called right after spawn: how to signal the tool itself. Absent: the process group is signalled. */
  control?(child: SpawnedChild): ProcessControl
  /**
   * Holds placeholders a launch of an earlier runtime made (`Launch.placeholders` of a kept process
   * a later runtime re-adopted, decision 0113), counted with its own launches' so that none is
   * removed while a launch still masks it; returns their release. Absent: it makes none.
   */
  holdPlaceholders?(placeholders: readonly Placeholder[]): () => void
  /** What it enforces and its known gaps on this host. */
  describe(): Promise<MechanismDescription>
}

/**
 * A run_as mechanism (`setpriv`, `runuser`): prefixes the launch so it runs as the user. The
 * launch it wraps already has the clean environment (the tool's travels inside, to the final
 * exec), and its descriptors must reach the wrapped executable unchanged.
 */
export interface RunAsMechanism {
  readonly name: string
  /** Whether the user (and group) exist and the switch can be made here. */
  qualify(runAs: RunAsTarget): Promise<Qualification>
  wrap(launch: Launch, runAs: RunAsTarget): Launch
}

/** The `launchers` service: the registry of mechanisms. */
export interface Launchers {
  /** Adds a sandbox mechanism; returns its removal. Two mechanisms of one name are refused. */
  registerSandbox(mechanism: SandboxMechanism): () => void
  /** Adds a run_as mechanism; returns its removal. */
  registerRunAs(mechanism: RunAsMechanism): () => void
  /** A sandbox mechanism by name. */
  sandbox(name: string): SandboxMechanism | undefined
  /** Every sandbox mechanism, in registration order. */
  sandboxes(): readonly SandboxMechanism[]
  /** A run_as mechanism by name. */
  runAs(name: string): RunAsMechanism | undefined
  /** Every run_as mechanism, in registration order. */
  runAsMechanisms(): readonly RunAsMechanism[]
}
