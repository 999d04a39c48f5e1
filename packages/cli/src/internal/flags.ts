import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { z } from 'zod'
import { type Config, ConfigFile, parseConfig, readConfigFile } from '../config.js'
import { CliError } from '../errors.js'
import { address } from './config-paths.js'
import {
  COMMANDS,
  type CommandName,
  type FlagBase,
  INVOCATION_FLAGS,
  KEY_FLAGS,
  SECTION_FLAGS,
  type SectionFlag,
} from './options.js'

/** A flag that sets a key of `toolvisor.json` (`value`: the key's schema, when the CLI owns the key). */
export type KeyedFlag = FlagBase & { readonly flag: string; readonly key: string; readonly value?: z.ZodType }

/** A flag of the table, with the key it sets, or the reason it sets none. */
export type Flag = KeyedFlag | (FlagBase & { readonly flag: string; readonly perInvocation: string })

/** Every flag of every command: the per-invocation `--config` first, the keys' flags, the other per-invocation ones. */
export function allFlags(): Flag[] {
  const sections = Object.entries(SECTION_FLAGS).flatMap(([section, flags]) =>
    Object.entries(flags as Record<string, SectionFlag>).map(([key, flag]) => ({
      ...flag,
      key: `${section}.${key}`,
    })),
  )
  const [config, ...others] = INVOCATION_FLAGS
  return [config!, ...sections, ...KEY_FLAGS, ...others]
}

/** The flags one command takes: its own first, then those every command shares. */
export function flagsOf(command: CommandName): Flag[] {
  const mine = allFlags().filter((flag) => flag.commands.includes(command))
  const shared = (flag: Flag) => COMMANDS.every((name) => flag.commands.includes(name))
  return [...mine.filter((flag) => !shared(flag)), ...mine.filter(shared)]
}

/** The values of a command line's flags, by flag name. */
export type FlagValues = Record<string, string | boolean | string[] | undefined>

/** A command line, parsed: the flags by name, and the positional arguments. */
export interface CommandLine {
  readonly values: FlagValues
  readonly positionals: string[]
}

/** Parses argv strictly against the command's flags: an unknown flag is a usage error naming it. */
export function parseLine(command: CommandName, argv: readonly string[], usage: string): CommandLine {
  const options = Object.fromEntries(
    flagsOf(command).map((flag) => [
      flag.flag,
      {
        type: flag.arg === undefined ? ('boolean' as const) : ('string' as const),
        ...(flag.multiple ? { multiple: true } : {}),
        ...(flag.short ? { short: flag.short } : {}),
      },
    ]),
  )
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options,
      allowPositionals: true,
      strict: true,
    })
    return { values: values as FlagValues, positionals }
  } catch (error) {
    throw new CliError('CLI_ERR_USAGE', `${(error as Error).message}\n\n${usage}`)
  }
}

const HELP_COLUMN = 29
const HELP_WIDTH = 100

/** The usage of a command: its text, then one entry per flag, from the table. */
export function usageOf(command: CommandName, text: string): string {
  const lines = flagsOf(command).map((flag) => {
    const head = `  ${flag.short ? `-${flag.short}, ` : ''}--${flag.flag}${flag.arg ? ` ${flag.arg}` : ''}`
    const words = flag.help.split(' ')
    const out: string[] = []
    let line =
      head.length + 1 < HELP_COLUMN ? head.padEnd(HELP_COLUMN) : `${head}\n${' '.repeat(HELP_COLUMN)}`
    let width = line.length - line.lastIndexOf('\n') - 1
    for (const word of words) {
      if (width > HELP_COLUMN && width + word.length + 1 > HELP_WIDTH) {
        out.push(line.trimEnd())
        line = ' '.repeat(HELP_COLUMN)
        width = HELP_COLUMN
      }
      line += width > HELP_COLUMN ? ` ${word}` : word
      width += (width > HELP_COLUMN ? 1 : 0) + word.length
    }
    out.push(line)
    return out.join('\n')
  })
  const file =
    'Flags override toolvisor.json (--config FILE); toolvisor check --config FILE validates the file.'
  return `${text}\n\n${lines.join('\n')}\n\n${file}`
}

/** The configuration file a command line names (`--config FILE`), absolute; undefined without one. */
export function configFileOf(values: FlagValues): string | undefined {
  return typeof values.config === 'string' ? resolve(values.config) : undefined
}

/**
 * The configuration of a command: the file of `--config` (if any) with every flag given on the
 * line set at its key (a repeatable flag adds to the file's items), then validated as a whole.
 * A flag's value is checked alone first, so its error names the flag.
 */
export function configOf(command: CommandName, values: FlagValues): Config {
  const file = configFileOf(values)
  const raw = file ? readConfigFile(file) : {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return parseConfig(raw, file)
  const merged = structuredClone(raw) as Record<string, unknown>
  for (const flag of flagsOf(command)) {
    const given = values[flag.flag]
    if (given === undefined || !('key' in flag)) continue
    setAt(merged, flag.key, flagValue(flag, given, valueAt(merged, flag.key)))
    // Any bash flag turns the bash tools on, as --bash does (a file's "enabled": false included).
    if (flag.key.startsWith('bash.')) setAt(merged, 'bash.enabled', true)
  }
  return parseConfig(merged, file)
}

/** The schema of a key of `toolvisor.json`, looked up in `ConfigFile`; undefined when there is no such key. */
export function schemaAt(key: string): z.ZodType | undefined {
  let at: z.ZodType | undefined = ConfigFile
  for (const part of key.split('.')) {
    const def = unwrapped(at)?.def as { shape?: Record<string, z.ZodType> } | undefined
    at = def?.shape?.[part]
  }
  return unwrapped(at)
}

function unwrapped(schema: z.ZodType | undefined): z.ZodType | undefined {
  let at = schema
  while (at && 'innerType' in at.def) at = (at.def as { innerType: z.ZodType }).innerType
  return at
}

/** A flag's text as its key's value: a number, a path made absolute, a list or map added to the file's. */
function flagValue(flag: KeyedFlag, given: string | boolean | string[], current: unknown): unknown {
  const schema = flag.value ? unwrapped(flag.value) : schemaAt(flag.key)
  if (!schema) throw new Error(`--${flag.flag}: ${flag.key} is no key of toolvisor.json`)
  if (typeof given === 'boolean') return given
  if (Array.isArray(given)) {
    const def = schema.def as { type: string; element?: z.ZodType }
    if (def.type === 'record')
      return { ...(current as object), ...Object.fromEntries(given.map((g) => pair(flag, g))) }
    const items = given.map((text) => checked(flag, def.element ? unwrapped(def.element)! : schema, text))
    return [...(Array.isArray(current) ? current : []), ...items]
  }
  return checked(flag, schema, given)
}

/** One value of a flag, parsed and checked against its schema; a usage error naming the flag when it does not fit. */
function checked(flag: Flag, schema: z.ZodType, text: string): unknown {
  const def = schema.def as { type: string; entries?: Record<string, string> }
  if (def.type === 'number') {
    const min = (schema as z.ZodNumber).minValue ?? 0
    const value = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN
    if (Number.isNaN(value) || value < min) {
      const expected = min >= 1 ? 'a positive whole number' : 'a whole number'
      throw new CliError('CLI_ERR_USAGE', `--${flag.flag}: expected ${expected}, got "${text.slice(0, 40)}"`)
    }
    return value
  }
  const value = flag.path === 'file' ? resolve(text) : flag.path === 'address' ? address(resolve)(text) : text
  const parsed = schema.safeParse(value)
  if (parsed.success) return value
  const expected = def.entries
    ? `expected one of ${Object.values(def.entries).join(', ')}`
    : parsed.error.issues[0]!.message
  throw new CliError('CLI_ERR_USAGE', `--${flag.flag} ${text}: ${expected}`)
}

/** `KEY=VALUE` of a map flag (`--backend web_read=read-curl`). */
function pair(flag: Flag, text: string): [string, string] {
  const at = text.indexOf('=')
  if (at <= 0 || at === text.length - 1) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--${flag.flag} ${text}: expected ${flag.arg}, e.g. --backend web_read=read-curl`,
    )
  }
  return [text.slice(0, at), text.slice(at + 1)]
}

function valueAt(json: Record<string, unknown>, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>((at, part) => (at as Record<string, unknown> | undefined)?.[part], json)
}

/** Sets a dot path, making the objects on the way (a non-object there is replaced; the schema says so after). */
function setAt(json: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.')
  let at = json
  for (const part of parts.slice(0, -1)) {
    const next = at[part]
    const object = typeof next === 'object' && next !== null && !Array.isArray(next)
    at[part] = object ? next : {}
    at = at[part] as Record<string, unknown>
  }
  at[parts.at(-1)!] = value
}
