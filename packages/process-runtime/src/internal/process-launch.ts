import { mkdirSync } from 'node:fs'
import type { Readable, Writable } from 'node:stream'
import type { CgroupLimits, Tree } from '@toolvisor/containment'
import type { InputSpec } from '@toolvisor/describe-v2'
import type { Launch, NetworkGate, ProcessControl, TerminalSize } from '@toolvisor/launchers'
import { RuntimeError } from '@toolvisor/launchers'
import { bulkStdout } from '@toolvisor/process-output'
import type { SpillLedger, SweepUrgency } from '@toolvisor/run-state'
import { MARKER_VARIABLE, type RunState } from '@toolvisor/run-state'
import type { Child, KeptChildHandle, Spawner } from '../spawner.js'
import type { ProcessRuntime, StartOptions } from '../types.js'
import { buildEnvironment } from './environment.js'
import type { AppliedLimits } from './limits.js'
import type { ToolProcess } from './process.js'
import { type KeptInfo, keptLaunch, keptSpawned } from './process-kept.js'
import { assembleWithin, gateOf } from './process-network.js'
import { ProcessTree } from './process-tree.js'
import { errnoText, workingDirectory } from './process-util.js'
import { assemble, type Spawned } from './spawn.js'

/** What a process needs from its runtime. */
export interface ProcessHost {
  readonly options: ProcessRuntime['options']
  readonly state: RunState
  /**
   * The account of process `id` with the disk budget (`stateBytes`): each of its spill writes asks
   * it first; the runtime releases it once the process, finished, is collected.
   */
  spillLedger(id: string): SpillLedger
  /** The final-exec helper, when it could be built here. */
  readonly execHelper: string | undefined
  /** A kept process launched or adopted (decision 0113): recorded, its keeper's side held; false: it has no keeper. */
  keeps(process: ToolProcess, child: KeptChildHandle, launched: Launched, start: StartOptions): boolean
  /** What launches are spawned through (Node's spawn, or `launch-native`'s fork server). */
  readonly spawner: Spawner
  /** A cgroup tree for launch `id` (decision 0097), when this host has cgroups for it; throws when one cannot be made. */
  tree(id: string, limits: CgroupLimits): Promise<Tree> | undefined
  /** The limits of a launch whose tool has none of its own (describe, check, help). */
  readonly defaultLimits: AppliedLimits
  finished(process: ToolProcess): void
  /**
   * Kills what the process started that left its group (found by the run's marker); resolves when
   * done. `lazy`: cleanup nobody waits for, batched longer.
   */
  sweep(process: ToolProcess, urgency?: SweepUrgency): Promise<void>
}

/** A spawned process as the runtime keeps it. */
export interface Launched {
  readonly child: Child
  /** How to signal the tool itself, when its mechanism needs more than the group signal. */
  readonly control?: ProcessControl
  /** The final exec's status pipe (see `watchExec`). */
  readonly status?: Readable
  /**
   * What the mechanism left on the host for this launch (`Launch.release`): the process undoes it
   * when its lifetime ends, with its timers and listeners.
   */
  readonly release?: () => void
  /** Its cgroup tree, when it has one. */
  readonly tree?: ProcessTree
  /** Its gate to the network, when its policy is an allow list (closed by the process when it ends). */
  readonly gate?: NetworkGate
  /** Its keeper's directory and pid, when it is kept (`StartOptions.keep`). */
  readonly kept?: KeptInfo
}

/**
 * Builds the launch of a start (its environment, its working directory, the final exec stage
 * wrapped by the tool's mechanisms) and spawns it. Rejects with a `RuntimeError` (or the spawn's
 * own error) when nothing could be spawned; `child.pid` is undefined when Node's own spawn was
 * refused by the OS (it says why on 'error').
 */
export async function launchProcess(
  id: string,
  start: StartOptions,
  host: Pick<ProcessHost, 'options' | 'state' | 'execHelper' | 'spawner' | 'tree' | 'defaultLimits'>,
): Promise<Launched> {
  const { tool } = start
  if (start.terminal) checkSize(start.terminal)
  if (tool.rundir !== undefined) ensureRundir(tool.rundir)
  const gate = await gateOf(id, start, host)
  const env = buildEnvironment(tool, start.env, start.context, [MARKER_VARIABLE, host.state.marker(id)])
  const base: Launch = {
    file: tool.path,
    args: [...start.argv],
    // The proxy's variables win over the tool's own: they are how it reaches anything at all.
    env: gate ? { ...env, ...gate.env } : env,
    cwd: workingDirectory(tool, start.cwd),
    extraFds: [],
    // Set before the mechanisms wrap it: each keeps it, and one may launch differently on a terminal.
    ...(start.terminal ? { terminal: start.terminal } : {}),
    ...(gate ? { network: gate.route } : {}),
  }
  const assembled = assembleWithin(gate, () => assemble(tool, base, host.execHelper))
  const { status } = assembled
  const limits = tool.limits ?? host.defaultLimits
  const { spawner } = host
  // The tree is made, its limits written, before anything is spawned: the launch joins it first.
  // Only a spawner that places a child in its cgroups before its exec gets one.
  const cgroups =
    spawner.placement?.() === undefined
      ? undefined
      : await treeOf(host, id, limits).catch((error: unknown) => {
          // Nothing will be spawned: the gate opened for it closes now, not with a process.
          assembled.launch.release?.()
          void gate?.close()
          throw error
        })
  const launch: Launch = {
    ...assembled.launch,
    ...(cgroups?.bornIn !== undefined ? { cgroupDir: cgroups.bornIn } : {}),
    ...(cgroups ? { cgroups: cgroups.procsFiles() } : {}),
    ...(limits.rlimits.length > 0 ? { rlimits: limits.rlimits } : {}),
  }
  if (launch.placeholders) host.state.holding(id, launch.placeholders)
  // Nothing started: what was made for it is undone.
  const undo = (error: unknown): never => {
    for (const step of [launch.release, () => cgroups?.remove(), () => void gate?.close()]) step?.()
    throw error
  }
  const { child, pipes, kept } = await spawnIn(host, start, launch, undo)
  const control =
    child.pid !== undefined && tool.sandbox?.mechanism.control
      ? tool.sandbox.mechanism.control({ pid: child.pid, extraFds: pipes as (Readable | undefined)[] })
      : undefined
  const statusPipe = status === undefined ? undefined : (pipes[status] as Readable | undefined)
  return {
    child,
    ...(control ? { control } : {}),
    ...(statusPipe ? { status: statusPipe } : {}),
    ...(launch.release ? { release: launch.release } : {}),
    ...(cgroups ? { tree: new ProcessTree(cgroups, limits) } : {}),
    ...(gate ? { gate } : {}),
    ...(kept ? { kept } : {}),
  }
}

/** Spawns the launch, in its keeper when it is kept (decision 0113); `undo` undoes the launch's preparations and throws. */
async function spawnIn(
  host: Pick<ProcessHost, 'options' | 'spawner'>,
  start: StartOptions,
  launch: Launch,
  undo: (error: unknown) => never,
): Promise<Spawned & { readonly kept?: Launched['kept'] }> {
  const whole = stdinAtOnce(start)
  // Slabs: by the spec the process runs with (a start may give its own), as its output reads it.
  const slabs = bulkStdout(start.process ?? start.tool.process)
  const options = { stdoutInSlabs: slabs, tool: start.tool.path, ...(whole ? { stdinFile: whole } : {}) }
  const kept = start.keep && host.options.keeping ? keptLaunch(host, launch, start) : undefined
  const spawned = await host.spawner.launch(kept?.launch ?? launch, options).catch(undo)
  if (kept === undefined) return spawned
  const attached = await keptSpawned(kept, spawned).catch(undo)
  const keeper = (attached.child as KeptChildHandle).keeper
  const placeholders = launch.placeholders ? { placeholders: launch.placeholders } : {}
  return { ...attached, kept: { dir: kept.dir, keeper, ...placeholders } }
}

async function treeOf(
  host: Pick<ProcessHost, 'tree'>,
  id: string,
  limits: AppliedLimits,
): Promise<Tree | undefined> {
  try {
    return await host.tree(id, limits.cgroup)
  } catch (error) {
    const why = `cannot contain the launch: ${(error as Error).message}; nothing was started`
    throw new RuntimeError('RUNTIME_ERR_SPAWN_FAILED', why)
  }
}

/** The rundir is created if missing (at load, and again at each start should it have gone). */
function ensureRundir(rundir: string): void {
  try {
    mkdirSync(rundir, { recursive: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    const why = `$.runtime.rundir: ${rundir} is gone and cannot be created again: ${code}; the tool was not started`
    throw new RuntimeError('RUNTIME_ERR_RUNDIR', why)
  }
}

/** Why a launch threw, as a failed start's `why`. */
export function launchFailure(start: StartOptions, error: unknown): string {
  return RuntimeError.is(error)
    ? error.message
    : `cannot start ${start.tool.path}: ${(error as Error).message}`
}

/**
 * Reads the final exec's status pipe: text on it (`errno=N message`) means the tool itself could
 * not be started; `failed` gets the reason, once the pipe ended.
 */
export function watchExec(stream: Readable, tool: string, failed: (why: string) => void): void {
  let text = ''
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    if (text.length < 1024) text += chunk
  })
  stream.once('end', () => {
    if (text.length > 0) failed(`cannot start ${tool}: ${errnoText(text)}`)
  })
}

/**
 * Writes the stdin bytes, then closes stdin, unless the caller keeps it open, the tool declares a
 * `{"send": EVENT}` cancel (that event must be deliverable), or it is a service that declares
 * `process.input` (events are sent to it while it runs): then stdin stays open after the bytes.
 */
export function wireStdin(child: Child, start: StartOptions): void {
  const stdin = child.stdin
  if (!stdin) return
  // A tool that exits without reading its stdin must not crash us with EPIPE.
  stdin.on('error', () => {})
  const input = start.stdin
  if (input === 'open') return
  const whole = stdinAtOnce(start)
  if (whole !== undefined) {
    if (whole.length > 0) stdin.end(whole)
    else stdin.end()
  } else if (input && input.length > 0) stdin.write(Buffer.from(input))
}

/**
 * All the stdin a start gives, when stdin closes right after it (see `wireStdin`); undefined when
 * stdin stays open. Without a fork server the spawn gives it as a file then (see `spawnLaunch`).
 */
export function stdinAtOnce(start: StartOptions): Buffer | undefined {
  const input = start.stdin
  // A terminal's input ends only when it is hung up.
  if (input === 'open' || start.terminal !== undefined) return undefined
  const spec = start.process ?? start.tool.process
  if ('send' in start.tool.runtime.cancel || (spec.mode === 'service' && spec.input !== undefined))
    return undefined
  return input && input.length > 0 ? Buffer.from(input) : Buffer.alloc(0)
}

/**
 * Writes one event to a process's stdin, framed as `process.input` declares, after checking it
 * against the declared `input.event` (nothing is written when it does not match).
 */
export async function writeEvent(
  stdin: Writable | null | undefined,
  input: InputSpec | undefined,
  event: unknown,
  process: { readonly id: string; readonly tool: string },
): Promise<void> {
  const who = `process ${process.id} (${process.tool})`
  if (!stdin || stdin.destroyed || stdin.writableEnded) {
    throw new RuntimeError('RUNTIME_ERR_STDIN_CLOSED', `${who} does not accept input: its stdin is closed`)
  }
  const problem = input?.validate?.(event)
  if (problem !== undefined) {
    const why = `event does not match ${process.tool}'s input.event: ${problem}`
    throw new RuntimeError('RUNTIME_ERR_INVALID_INPUT', why)
  }
  const line = input?.framing === 'lines' && typeof event === 'string' ? event : JSON.stringify(event)
  await new Promise<void>((resolve, reject) => {
    stdin.write(`${line}\n`, (error) => (error ? reject(error) : resolve()))
  }).catch((error: NodeJS.ErrnoException) => {
    const why = `${who} stopped reading its stdin: ${error.code ?? error.message}`
    throw new RuntimeError('RUNTIME_ERR_STDIN_CLOSED', why)
  })
}

/** Writes keystrokes to a terminal's input (`ProcessTerminal.type`), refused once it ended or hung up. */
export async function typeInto(
  stdin: Writable | null | undefined,
  bytes: Uint8Array | string,
  process: { readonly id: string; readonly tool: string },
): Promise<void> {
  const who = `process ${process.id} (${process.tool})`
  if (!stdin || stdin.destroyed || stdin.writableEnded) {
    throw new RuntimeError(
      'RUNTIME_ERR_STDIN_CLOSED',
      `${who} takes no more input: its terminal was hung up or it ended`,
    )
  }
  await new Promise<void>((resolve, reject) => {
    stdin.write(bytes, (error) => (error ? reject(error) : resolve()))
  }).catch((error: NodeJS.ErrnoException) => {
    throw new RuntimeError(
      'RUNTIME_ERR_STDIN_CLOSED',
      `${who} takes no more input: ${error.code ?? error.message}`,
    )
  })
}

/** Throws for a size no terminal has (1 to 65535 whole columns and rows). */
export function checkSize(size: TerminalSize): void {
  const fits = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535
  if (!fits(size.columns) || !fits(size.rows)) {
    const why = `a terminal is 1 to 65535 columns and rows, not ${size.columns}x${size.rows}`
    throw new RuntimeError('RUNTIME_ERR_INVALID_INPUT', why)
  }
}
