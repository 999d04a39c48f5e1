import { resolve } from 'node:path'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { type Config, emptyConfig, readConfig } from './config.js'
import { CliError } from './errors.js'

/** The flags every command that loads tools takes. */
export const RUNTIME_FLAGS = {
  config: { type: 'string' },
  toolbox: { type: 'string', multiple: true },
  'state-dir': { type: 'string' },
  'envdir-root': { type: 'string' },
  sandbox: { type: 'string' },
  'sandbox-user': { type: 'string' },
  'run-as': { type: 'string' },
  backend: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const

/** The help text of the runtime flags. */
export const RUNTIME_FLAGS_HELP = `  --config FILE        read toolvisor.json (flags override it)
  --toolbox DIR        a directory of tools (repeatable)
  --state-dir DIR      where run records and spill files go (default ~/.local/state/toolvisor)
  --envdir-root DIR    where runtime.envdir subdirectories are found
  --sandbox MECHANISM  bwrap, landlock or auto: how runtime.sandbox declarations are enforced
  --sandbox-user NAME  who sandboxed tools run as when toolvisor is root (default nobody)
  --run-as MECHANISM   setpriv or runuser: how runtime.run_as is honoured
  --backend CAP=NAME   move backend NAME of capability CAP first (repeatable)
  -h, --help           this help`

type Options = NonNullable<ParseArgsConfig['options']>

/** What `parse` returns: the flags by name, and the positional arguments. */
export interface Parsed<O extends Options> {
  readonly values: ReturnType<
    typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>
  >['values']
  readonly positionals: string[]
}

/** Parses argv strictly: an unknown flag is a usage error naming it. */
export function parse<O extends Options>(argv: readonly string[], options: O, usage: string): Parsed<O> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new CliError('CLI_ERR_USAGE', `${(error as Error).message}\n\n${usage}`)
  }
}

/** The configuration from `--config` merged with the runtime flags (flags win). */
export function configFrom(values: Record<string, unknown>): Config {
  const config = typeof values.config === 'string' ? readConfig(values.config) : emptyConfig()
  const toolboxes = (values.toolbox as string[] | undefined)?.map((dir) => resolve(dir))
  const backends = { ...config.backends }
  for (const entry of (values.backend as string[] | undefined) ?? []) {
    const at = entry.indexOf('=')
    if (at <= 0 || at === entry.length - 1) {
      throw new CliError(
        'CLI_ERR_USAGE',
        `--backend ${entry}: expected CAPABILITY=BACKEND, e.g. --backend web_read=read-curl`,
      )
    }
    backends[entry.slice(0, at)] = entry.slice(at + 1)
  }
  const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined)
  return {
    ...config,
    toolboxes: [...config.toolboxes, ...(toolboxes ?? [])],
    backends,
    ...(str('state-dir') ? { stateDir: resolve(str('state-dir')!) } : {}),
    ...(str('envdir-root') ? { envdirRoot: resolve(str('envdir-root')!) } : {}),
    ...(str('sandbox') ? { sandbox: str('sandbox')! } : {}),
    ...(str('sandbox-user') ? { sandboxUser: str('sandbox-user')! } : {}),
    ...(str('run-as') ? { runAs: str('run-as')! } : {}),
  }
}
