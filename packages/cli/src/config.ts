import { readFileSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import { limitsSchema } from '@toolvisor/describe-v2'
import { MailboxConfig } from '@toolvisor/mailbox'
import { EnvironmentPolicyConfig, RuntimeConfig } from '@toolvisor/process-runtime'
import { BashConfigFields } from '@toolvisor/tool-bash'
import { ProcessesConfig } from '@toolvisor/tool-processes'
import { ToolboxConfig, ToolboxEntryConfig } from '@toolvisor/toolbox'
import { z } from 'zod'
import { CliError } from './errors.js'
import { NetworkSection } from './internal/config-network.js'
import { bashPaths, sectionPathsAbsolute } from './internal/config-paths.js'
import { configProblems } from './internal/config-problems.js'
import { SECTION_FLAGS, type SectionFlag } from './internal/options.js'

/** One capability: a model-facing tool served by ordered backends (spec §1.5). */
export const CapabilityEntry = z
  .object({
    capability: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'a name of letters, digits, _ and - (at most 64)'),
    backends: z.array(z.string().min(1)).min(1, 'at least one backend'),
    required: z.boolean().default(true),
  })
  .strict()

/**
 * The `bash` section: present, the bash tools are served (decision 0033) unless `enabled` is
 * false; its fields are `@toolvisor/tool-bash`'s, with `workdir` and `bash` relative to the file.
 */
export const BashSection = BashConfigFields.extend({
  /** False: the section is kept, the tools are not served. Default true. */
  enabled: z.boolean().default(true),
  workdir: z.string().min(1).optional(),
  bash: z.string().min(1).optional(),
}).strict()

/** A section the CLI owns, from its flags: each key's schema is its flag's value, described by its help. */
function sectionOf<T extends Record<string, SectionFlag>>(
  flags: T,
): z.ZodOptional<z.ZodObject<{ [K in keyof T]: z.ZodOptional<T[K]['value']> }, z.core.$strict>> {
  const shape = Object.fromEntries(
    Object.entries(flags).map(([key, flag]) => [
      key,
      flag.value.optional().describe(`${flag.help} (flag --${flag.flag})`),
    ]),
  )
  return z.strictObject(shape).optional() as never
}

const LIMIT_DEFAULTS =
  'What every launch may use unless its tool declares less (decision 0097): memory (bytes or "512M"), pids, cpu (share of a core), file_size, open_files, cpu_time (seconds). Default pids 1024 and half the host memory.'
const LIMIT_CEILINGS =
  "The most a tool's runtime.limits may ask for, per field (default: the defaults: a tool may ask for less, never more)."

/** The schema of `toolvisor.json`. Relative paths are relative to the file. */
export const ConfigFile = z
  .object({
    $schema: z
      .string()
      .optional()
      .describe(
        'The JSON Schema an editor checks the file against (`@toolvisor/cli/toolvisor.schema.json`).',
      ),
    toolboxes: z
      .array(ToolboxEntryConfig)
      .default([])
      .describe(
        'Toolbox directories; an entry may be `{ "path", "environment", "keepControls", "allowDash" }` to give its tools their own policy.',
      ),
    capabilities: z
      .array(CapabilityEntry)
      .default([])
      .describe('Model-facing tools each served by the first working of ordered backends.'),
    sandbox: z.string().min(1).optional(),
    sandboxUser: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Who sandboxed tools run as when toolvisor is root and they declare no run_as (default `nobody`).',
      ),
    environment: EnvironmentPolicyConfig.optional().describe(
      "Which of toolvisor's own environment variables tools inherit (see EnvironmentPolicy).",
    ),
    envdirRoot: z.string().min(1).optional(),
    envdirPermissions: RuntimeConfig.shape.envdirPermissions.describe(
      'An envdir root that group or others may read or write: `refuse` it at start (default), or `warn` on stderr and use it.',
    ),
    runAs: z.string().min(1).optional(),
    runAsAllow: RuntimeConfig.shape.runAsAllow.describe(
      'The users a tool’s own run_as may name; "*" is any user but root, which is allowed only by its name. Default none: a tool that declares run_as does not load.',
    ),
    stateDir: z.string().min(1).optional(),
    backends: z.record(z.string(), z.string().min(1)).default({}),
    checkTtlMs: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'How long a check result is trusted, in ms (`toolvisor check` without --probe). Default 600000.',
      ),
    checkTimeoutMs: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("The longest a tool's check may take, in ms. Default 10000."),
    yieldMs: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        'How long a stream call waits before it answers with the running placeholder, in ms. Default 5000.',
      ),
    resultBytes: ToolboxConfig.shape.resultBytes.describe(
      'The most bytes of any model-facing answer (results, processes answers). Default 256 KiB.',
    ),
    ringEvents: RuntimeConfig.shape.ringEvents.describe(
      'Output events kept in memory per process; older ones are read back from the spill file. Default 256.',
    ),
    ringBytes: RuntimeConfig.shape.ringBytes.describe(
      "The most stdout bytes a process's ring of events may stand for. Default 4 MiB.",
    ),
    ringStderrLines: RuntimeConfig.shape.ringStderrLines.describe(
      'stderr lines kept per process (status shows the last ones). Default 256.',
    ),
    stateBytes: RuntimeConfig.shape.stateBytes.describe(
      'The disk budget of the state directory: ended runs and unreferenced spill files are pruned past it, and live spills count (once it is spent, a spill is cut and the result says so). Default 1 GiB.',
    ),
    spillBytes: RuntimeConfig.shape.spillBytes.describe(
      "The most bytes one stream's spill file keeps (its first ones); past them the spill is cut and results say how much was not kept. Default 256 MiB.",
    ),
    maxLineBytes: RuntimeConfig.shape.maxLineBytes.describe(
      'The longest output line kept whole; a longer one is an invalid event. Default 1 MiB.',
    ),
    protectedPaths: RuntimeConfig.shape.protectedPaths.describe(
      'More paths kept read-only inside every writable grant, beside the defaults (git hooks and config, shell rc files, .envrc, editor and agent-client folders): relative to the grant, a directory ending in / (decision 0096).',
    ),
    streamResultEvents: ToolboxConfig.shape.streamResultEvents
      .unwrap()
      .optional()
      .describe("Events a finished stream call's result keeps at most. Default 100."),
    maxEvents: ProcessesConfig.unwrap()
      .shape.maxEvents.unwrap()
      .optional()
      .describe('The most events one processes tail, read or page returns. Default 1000.'),
    replyMs: ProcessesConfig.unwrap()
      .shape.replyMs.unwrap()
      .optional()
      .describe("How long `slug.send` collects a service's reply, in ms. Default 1000."),
    omitSend: ProcessesConfig.unwrap()
      .shape.omitSend.unwrap()
      .optional()
      .describe(
        'Service slugs whose `slug.send` companion is not served (the model may start them, never talk to them).',
      ),
    digestFlushMs: MailboxConfig.unwrap()
      .shape.digestFlushMs.unwrap()
      .optional()
      .describe(
        'The longest an event of a service’s {"per":"events","n":N} digest waits for its envelope, in ms: the events short of N are mailed this long after the first of them (0: no bound; they wait for N, the process’s end or its stop). Default 30000.',
      ),
    mailBytes: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        "The most bytes of a session's mail folded into one tool result (`mcp` and `serve`); 0 never folds. Default 16384.",
      ),
    bwrap: z
      .string()
      .min(1)
      .optional()
      .describe('The bubblewrap binary the bwrap mechanism runs (default `bwrap` on PATH).'),
    landlockLauncher: z
      .string()
      .min(1)
      .optional()
      .describe('The Landlock launcher (default: the one @toolvisor/sandbox-landlock built).'),
    bash: BashSection.optional().describe(
      "The bash tools (`bash`, `bash_output`, `bash_kill`, or another profile's): off unless present.",
    ),
    serve: sectionOf(SECTION_FLAGS.serve).describe(
      '`toolvisor serve`: the listener, its token, its origins and bounds.',
    ),
    mcp: sectionOf(SECTION_FLAGS.mcp).describe(
      '`toolvisor mcp`: the stdio server, or with `connect` the bridge to a daemon.',
    ),
    limits: sectionOf(SECTION_FLAGS.limits)
      .unwrap()
      .extend({
        defaults: limitsSchema(true).optional().describe(LIMIT_DEFAULTS),
        ceilings: limitsSchema(true).optional().describe(LIMIT_CEILINGS),
      })
      .optional()
      .describe(
        'The bounds of each MCP session, for `mcp` and `serve` (decision 0015), and what a launch may use (`defaults`, `ceilings`: decision 0097).',
      ),
    network: NetworkSection.optional().describe(
      "The network by name: what tools' `runtime.sandbox.net` may ask for (decision 0111). The bash tools' own network is `bash.network`.",
    ),
    launch: z
      .object({
        native: z
          .boolean()
          .optional()
          .describe(
            'Fork launches from the fork server of @toolvisor/launch-native, which puts each in its own cgroup and sets its limits before its exec (default true); false: spawn them from toolvisor itself, without a cgroup per launch or limits (decision 0107). TOOLVISOR_FORK_SERVER=off does the same.',
          ),
      })
      .strict()
      .optional()
      .describe('How launches are spawned.'),
    cgroup: z
      .union([z.string().refine(isAbsolute, 'an absolute path'), z.literal(false)])
      .optional()
      .describe(
        'A cgroup v2 directory delegated to toolvisor, where each launch gets its own cgroup (default: `toolvisor` below its own cgroup); false: none (decision 0097).',
      ),
    call: sectionOf(SECTION_FLAGS.call).describe(
      '`toolvisor call`: the session, progress, the yield window.',
    ),
  })
  .strict()

/** The configuration after the file and the flags are merged (flags win). */
export type Config = z.output<typeof ConfigFile>

/** A capability as configured. */
export type CapabilityConfig = z.output<typeof CapabilityEntry>

/** Reads and validates `toolvisor.json`; paths in it become absolute, relative to the file. */
export function readConfig(path: string): Config {
  return parseConfig(readConfigFile(path), resolve(path))
}

/** The JSON of a configuration file, not yet validated. */
export function readConfigFile(path: string): unknown {
  const file = resolve(path)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new CliError(
      'CLI_ERR_CONFIG',
      `${file}: cannot read the configuration: ${(error as NodeJS.ErrnoException).code ?? error}`,
    )
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new CliError('CLI_ERR_CONFIG', `${file}: not JSON: ${(error as Error).message}`)
  }
}

/**
 * Validates a configuration (the file's JSON, with the flags already in it) and makes its paths
 * absolute, relative to the file, or without one to the working directory. Every problem is
 * reported, one line each, with the JSON path and what was expected.
 */
export function parseConfig(json: unknown, file: string | undefined): Config {
  const parsed = ConfigFile.safeParse(json)
  if (!parsed.success) {
    const where = file ?? 'the configuration'
    const lines = configProblems(parsed.error, json, ConfigFile).map((problem) => `${where}: ${problem}`)
    throw new CliError('CLI_ERR_CONFIG', lines.join('\n'))
  }
  const base = file ? dirname(file) : process.cwd()
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p))
  const config = parsed.data
  const made: Config = {
    ...config,
    toolboxes: config.toolboxes.map((entry) =>
      typeof entry === 'string' ? abs(entry) : { ...entry, path: abs(entry.path) },
    ),
    capabilities: config.capabilities.map((c) => ({ ...c, backends: c.backends.map(abs) })),
    ...(config.envdirRoot ? { envdirRoot: abs(config.envdirRoot) } : {}),
    ...(config.stateDir ? { stateDir: abs(config.stateDir) } : {}),
    ...(config.bash ? { bash: bashPaths(config.bash, abs) } : {}),
  }
  sectionPathsAbsolute(made, abs)
  return made
}

/** The empty configuration (no file). */
export function emptyConfig(): Config {
  return ConfigFile.parse({})
}
