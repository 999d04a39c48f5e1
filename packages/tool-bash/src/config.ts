import { isAbsolute } from 'node:path'
import { limitsSchema } from '@toolvisor/describe-v2'
import { z } from 'zod'
import type { SandboxMode } from './modes.js'
import { entryProblem } from './network.js'

const positive = z.number().int().positive()

/** One entry of `bash.network`'s lists, checked as the network gates check it at load. */
const netEntry = z.string().superRefine((text, ctx) => {
  const problem = entryProblem(text)
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
})

/** The seed whose model-facing words the tools speak (decision 0030). */
export const PROFILES = ['dsh', 'hyperhive', 'toolnexus', 'codex'] as const

/** A profile's name. */
export type ProfileName = (typeof PROFILES)[number]

/** The fields of the bash tools' configuration (`toolvisor.json` `bash`), every one optional. */
export const BashConfigFields = z
  .object({
    /**
     * Whose words: `dsh` (seed 001, the default), `hyperhive` (seed 002), `toolnexus` (seed 004),
     * `codex` (Codex's unified exec, which seed 001's project now ships too).
     */
    profile: z
      .enum({
        /** `bash`, `bash_output`, `bash_kill`, `write_stdin` (the default). */
        dsh: 'dsh',
        /** `run`, `status`, `kill`, `send`. */
        hyperhive: 'hyperhive',
        /** `bash`, `bash_output`, `kill_shell`, `write_stdin`. */
        toolnexus: 'toolnexus',
        /** Codex's unified exec: `exec_command`, `write_stdin`. */
        codex: 'codex',
      } satisfies Record<ProfileName, ProfileName>)
      .default('dsh'),
    /** The bound of a foreground command that names none, in ms. Default 2 min. */
    defaultTimeoutMs: positive.default(120_000),
    /** The most a foreground command may ask for, in ms (a larger `timeoutMs` is cut to it). Default 10 min. */
    maxTimeoutMs: positive.default(600_000),
    /** Between the stop signal to the process group and SIGKILL, in ms. Default 2 s. */
    killGraceMs: z.number().int().nonnegative().default(2_000),
    /** Bytes of each stream a result or a read shows at most (its newest ones). Default 30000. */
    outputBytes: positive.default(30_000),
    /** The most seconds an inline `wait_seconds` waits. Default 30. */
    maxWaitSeconds: positive.default(30),
    /**
     * Background tasks one session may run at once (decision 0105). Past it, hyperhive's `run`
     * queues the task as `pending` (started when one ends, cancellable with `kill`: seed 002); the
     * other profiles refuse the call, starting nothing. Default 32.
     */
    maxTasksPerSession: positive.default(32),
    /** Where commands run when neither the call nor its session says: default toolvisor's own cwd. */
    workdir: z
      .string()
      .refine((path) => isAbsolute(path), 'an absolute path')
      .optional(),
    /** The bash to run; default `bash` on toolvisor's PATH. */
    bash: z.string().min(1).optional(),
    /**
     * The standing sandbox mode of every session (decision 0034): `read-only`, `workspace-write`
     * (the session's working directory and a /tmp writable) or `danger-full-access` (no sandbox).
     * Run by the runtime's mechanism (`--sandbox`); refused at start-up when it cannot honour it.
     * Absent: commands run unsandboxed, as toolvisor's user, and nothing about modes is shown.
     */
    sandbox: z
      .enum({
        /** Everything readable the policy grants, nothing writable but a private tmp. */
        'read-only': 'read-only',
        /** The session's working directory and tmp writable. */
        'workspace-write': 'workspace-write',
        /** No sandbox. */
        'danger-full-access': 'danger-full-access',
      } satisfies Record<SandboxMode, SandboxMode>)
      .optional(),
    /**
     * What the commands of the confining modes (read-only, workspace-write) may reach (decision
     * 0112): an allow list through toolvisor's proxy, by default an empty one, each name a host
     * (`registry.npmjs.org`), `*.domain` or an address, `:port` for one port; a command may ask
     * the user for more names once (`network_allow`). `host`: the host's whole network, as seed
     * 001 leaves it; `none`: no network at all. danger-full-access runs unsandboxed, with the host's.
     */
    network: z
      .union([
        z.enum({
          /** The host's whole network (seed 001's): the operator's explicit choice. */
          host: 'host',
          /** No network at all; no name can be asked for. */
          none: 'none',
        }),
        z
          .object({
            allow: z.array(netEntry).default([]),
            deny: z.array(netEntry).default([]),
          })
          .strict(),
      ])
      .optional()
      .describe(
        'What the commands of the confining modes (read-only, workspace-write) may reach: {"allow": [...], "deny": [...]} through toolvisor\'s proxy (default: an empty allow list; entries "registry.npmjs.org", "*.github.com", "10.0.0.5:5432"), "host" (the host\'s whole network, as seed 001 leaves it) or "none". A command may ask the user for more names once (network_allow). danger-full-access runs unsandboxed, with the host\'s network (decision 0112).',
      ),
    /**
     * What every bash command's whole process tree may use (decision 0097): memory, pids, cpu,
     * file_size, open_files, cpu_time, as in a tool's `runtime.limits`. The operator's own: no
     * ceiling applies. Absent fields: the runtime's defaults (`limits.defaults`, else pids 1024 and
     * half the host's memory: a fork bomb or a memory bomb in a command is held).
     */
    limits: limitsSchema(true).optional(),
    /** Keep terminal control codes in output instead of escaping them as `\uXXXX` (decision 0013). */
    keepControls: z.boolean().default(false),
  })
  .strict()

/** The operator's configuration of the bash tools: `BashConfigFields`, checked together. */
export const BashConfig = BashConfigFields.refine(
  (config) => config.defaultTimeoutMs <= config.maxTimeoutMs,
  {
    message: 'defaultTimeoutMs must not exceed maxTimeoutMs',
    path: ['defaultTimeoutMs'],
  },
)
  .refine(
    // A network narrower than the host's confines nothing without a confining mode: refused, not ignored.
    (config) =>
      config.network === undefined ||
      config.network === 'host' ||
      config.sandbox === 'read-only' ||
      config.sandbox === 'workspace-write',
    {
      message:
        "confines the commands of the read-only and workspace-write sandbox modes only: set sandbox to one of them, or leave network out (without a sandbox, and under danger-full-access, commands have the host's network)",
      path: ['network'],
    },
  )
  .prefault({})

/** The configuration as validated. */
export type BashOptions = z.output<typeof BashConfig>
