import { homedir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type Token } from '@toolvisor/kernel'
import type { NetworkGates, SandboxMechanism } from '@toolvisor/launchers'
import {
  createLaunchers,
  LaunchersToken,
  NetworkGatesToken,
  sandboxMechanismToken,
} from '@toolvisor/launchers'
import { runuserRunAs, setprivRunAs } from '@toolvisor/run-as'
import { z } from 'zod'
import { AUTO_ORDER } from './internal/mechanism-choice.js'
import { Runtime } from './runtime.js'
import type { Keeping, Spawner } from './spawner.js'
import { KeepingToken, RuntimeToken, spawnerToken } from './tokens.js'
import type { RuntimeOptions } from './types.js'

/** Where run records and spill files go by default: `$XDG_STATE_HOME/toolvisor` or `~/.local/state/toolvisor`. */
export function defaultStateDir(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state')
  return join(base, 'toolvisor')
}

const positive = z.number().int().positive()

/** An environment policy as configured (see `EnvironmentPolicy`). */
export const EnvironmentPolicyConfig = z
  .object({
    inherit: z
      .enum({
        /** Every variable toolvisor has, less `DEFAULT_EXCLUDES` (names like `*KEY*`, `*TOKEN*`). */
        all: 'all',
        /** Only `CORE_VARIABLES` (PATH, HOME, USER, LANG, LC_*, TERM, TZ, TMPDIR, SHELL). */
        core: 'core',
        /** None: the tool gets only what the policy's `set` gives it. */
        none: 'none',
      })
      .optional(),
    ignoreDefaultExcludes: z.boolean().optional(),
    exclude: z.array(z.string().min(1)).optional(),
    includeOnly: z.array(z.string().min(1)).optional(),
    set: z.record(z.string().min(1), z.string()).optional(),
  })
  .strict()

/** The runtime plugin's configuration (the operator's options). */
export const RuntimeConfig = z
  .object({
    stateDir: z.string().min(1).default(defaultStateDir),
    envdirRoot: z.string().min(1).optional(),
    sandbox: z.string().min(1).optional(),
    /** The spawner launches go through, by the name its plugin provides it under (`native`); default Node's spawn. */
    spawner: z.string().min(1).optional(),
    /** Keep what asks to be kept past this runtime (decision 0113): injects `keeping` (`@toolvisor/keeper`). */
    keep: z.boolean().optional(),
    runAs: z.string().min(1).optional(),
    runAsAllow: z.array(z.string().min(1)).optional(),
    sandboxUser: z.string().min(1).optional(),
    environment: EnvironmentPolicyConfig.optional(),
    execHelper: z.string().min(1).optional(),
    ringEvents: positive.optional(),
    ringBytes: positive.optional(),
    retainBytes: z.number().int().nonnegative().optional(),
    ringStderrLines: positive.optional(),
    resultBytes: positive.optional(),
    maxLineBytes: positive.optional(),
    tailBytes: positive.optional(),
    retentionMs: positive.optional(),
    oneshotTimeoutMs: positive.optional(),
    stateBytes: positive.optional(),
    ownPaths: z
      .array(
        z
          .object({
            path: z.string().min(1),
            kind: z.enum({
              /** Never visible nor writable from a sandbox (a token file, a socket, a configuration). */
              secret: 'secret',
              /** Never writable from a sandbox (code toolvisor runs). */
              code: 'code',
            }),
            what: z.string().min(1),
          })
          .strict(),
      )
      .optional(),
    protectedPaths: z
      .array(
        z
          .string()
          .regex(
            /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[^/\0]+(\/[^/\0]+)*\/?$/,
            'expected a path relative to a writable grant (.git/hooks/, .bashrc), without . or .. parts',
          ),
      )
      .optional(),
    spillBytes: positive.optional(),
    /** The network by name (decision 0111): `gates` injects `@toolvisor/network`'s; the rest are the operator's bounds. */
    network: z
      .object({
        gates: z.boolean().optional(),
        ceiling: z.array(z.string().min(1)).optional(),
        host: z.boolean().optional(),
        force: z.literal('none').optional(),
      })
      .strict()
      .optional(),
    envdirPermissions: z
      .enum({
        /** An envdir root that group or others may read or write stops the start (the default). */
        refuse: 'refuse',
        /** It is used, and the start warns (`warnings()`, printed by the CLI on stderr). */
        warn: 'warn',
      })
      .optional(),
  })
  .strict()

/** The key the spawner a `spawner` option names is injected under (not a mechanism's name: those have no colon). */
const SPAWNER = 'spawner:'
/** The key the network gates are injected under, when `network.gates` is true. */
const GATES = 'network:'
/** The key the keeping is injected under, when `keep` is true. */
const KEEPING = 'keeping:'

/** What the options need: the mechanisms a `sandbox` option names (`auto`'s), and the spawner a `spawner` option names. */
function injected(
  config: z.output<typeof RuntimeConfig>,
): Record<string, Token<SandboxMechanism | Spawner | NetworkGates | Keeping>> {
  const { sandbox, spawner, network, keep } = config
  const names = sandbox === undefined ? [] : sandbox === 'auto' ? AUTO_ORDER : [sandbox]
  return {
    ...Object.fromEntries(names.map((name) => [name, sandboxMechanismToken(name)])),
    ...(spawner === undefined ? {} : { [SPAWNER]: spawnerToken(spawner) }),
    ...(network?.gates ? { [GATES]: NetworkGatesToken } : {}),
    ...(keep ? { [KEEPING]: KeepingToken } : {}),
  }
}

/**
 * The process runtime as a kernel plugin: provides `launchers` (with the `setpriv` and `runuser`
 * run_as mechanisms registered) and `runtime` (the task registry over it is `@toolvisor/tasks`). It injects the sandbox mechanism its
 * `sandbox` option names (`sandboxMechanismToken`) and the spawner its `spawner` option names
 * (`spawnerToken`: `native` is `@toolvisor/launch-native`'s), so it is active only once their
 * plugins are: tools are never prepared before their mechanism exists, nor launched by another
 * spawner than the one asked for. Unloading it stops every running process.
 */
export const runtimePlugin = definePlugin({
  name: 'process-runtime',
  provides: [LaunchersToken, RuntimeToken],
  config: RuntimeConfig,
  inject: injected,
  apply(ctx, config) {
    const launchers = createLaunchers()
    launchers.registerRunAs(setprivRunAs())
    launchers.registerRunAs(runuserRunAs())
    const { [SPAWNER]: spawner, [GATES]: gates, [KEEPING]: keeping, ...mechanisms } = ctx.deps
    for (const mechanism of Object.values(mechanisms))
      launchers.registerSandbox(mechanism as SandboxMechanism)
    // The option names the spawner; the runtime gets the spawner itself.
    const { spawner: _named, network, keep: _keep, ...options } = config
    const { gates: _asked, ...bounds } = network ?? {}
    const runtime = new Runtime(
      {
        ...stripUndefined(options),
        ...(spawner === undefined ? {} : { spawner: spawner as Spawner }),
        ...(keeping === undefined ? {} : { keeping: keeping as Keeping }),
        ...(network === undefined
          ? {}
          : { network: { ...stripUndefined(bounds), ...(gates ? { gates: gates as NetworkGates } : {}) } }),
      },
      launchers,
    )
    ctx.provide(LaunchersToken, launchers)
    ctx.provide(RuntimeToken, runtime)
    ctx.onDispose(() => runtime.dispose())
  },
})

function stripUndefined<T extends object>(value: T): RuntimeOptions {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined),
  ) as unknown as RuntimeOptions
}
