import { homedir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type Token } from '@toolvisor/kernel'
import { z } from 'zod'
import type { SandboxMechanism } from './launchers.js'
import { AUTO_ORDER } from './mechanism-choice.js'
import { createLaunchers } from './registry.js'
import { runuserRunAs, setprivRunAs } from './run-as.js'
import { Runtime } from './runtime.js'
import { LaunchersToken, RuntimeToken, sandboxMechanismToken } from './tokens.js'
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

/** The mechanisms a `sandbox` option needs: the one it names, `auto`'s, or none. */
function mechanismsFor(sandbox: string | undefined): Record<string, Token<SandboxMechanism>> {
  const names = sandbox === undefined ? [] : sandbox === 'auto' ? AUTO_ORDER : [sandbox]
  return Object.fromEntries(names.map((name) => [name, sandboxMechanismToken(name)]))
}

/**
 * The process runtime as a kernel plugin: provides `launchers` (with the `setpriv` and `runuser`
 * run_as mechanisms registered) and `runtime` (the task registry over it is `@toolvisor/tasks`). It injects the sandbox mechanism its
 * `sandbox` option names (`sandboxMechanismToken`), so it is active only once that mechanism's
 * plugin is: tools are never prepared before their mechanism exists. Unloading it stops every
 * running process.
 */
export const runtimePlugin = definePlugin({
  name: 'process-runtime',
  provides: [LaunchersToken, RuntimeToken],
  config: RuntimeConfig,
  inject: (config: z.output<typeof RuntimeConfig>) => mechanismsFor(config.sandbox),
  apply(ctx, config) {
    const launchers = createLaunchers()
    launchers.registerRunAs(setprivRunAs())
    launchers.registerRunAs(runuserRunAs())
    for (const mechanism of Object.values(ctx.deps)) launchers.registerSandbox(mechanism)
    const runtime = new Runtime(stripUndefined(config), launchers)
    ctx.provide(LaunchersToken, launchers)
    ctx.provide(RuntimeToken, runtime)
    ctx.onDispose(() => runtime.dispose())
  },
})

function stripUndefined(value: z.output<typeof RuntimeConfig>): RuntimeOptions {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined),
  ) as unknown as RuntimeOptions
}
