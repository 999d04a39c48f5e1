import { z } from 'zod'
import { ConfigFile } from './config.js'
import { allFlags } from './internal/flags.js'

/** Where the committed JSON Schema is, in this package (`@toolvisor/cli/toolvisor.schema.json`). */
export const CONFIG_SCHEMA_FILE = 'toolvisor.schema.json'

/**
 * The JSON Schema of `toolvisor.json`, for editors: generated from `ConfigFile` (the input side:
 * every key with a default is optional), with each key's description, or its flag's help, and the
 * name of the flag that sets it.
 * `pnpm schema` writes it to `packages/cli/toolvisor.schema.json`; a test fails when that file is stale.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigFile, { io: 'input', target: 'draft-2020-12' }) as Record<
    string,
    unknown
  >
  for (const flag of allFlags()) {
    if (!('key' in flag)) continue
    let at = schema
    for (const part of flag.key.split('.')) {
      at = ((at.properties ?? {}) as Record<string, Record<string, unknown>>)[part] ?? {}
    }
    const known = typeof at.description === 'string' && !at.description.includes('(flag --')
    at.description = `${known ? at.description : flag.help} (flag --${flag.flag})`
  }
  return {
    title: 'toolvisor.json: the configuration of the toolvisor command',
    ...schema,
  }
}
