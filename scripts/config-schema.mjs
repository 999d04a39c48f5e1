#!/usr/bin/env node
// `pnpm schema`: writes packages/cli/toolvisor.schema.json, the JSON Schema of toolvisor.json that
// editors read through "$schema", from the CLI's zod schema (its built dist). Commit the result: a
// test in packages/cli fails when the committed file differs from what this writes.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONFIG_SCHEMA_FILE, configJsonSchema } from '@toolvisor/cli'

const root = fileURLToPath(new URL('..', import.meta.url))
const file = join(root, 'packages', 'cli', CONFIG_SCHEMA_FILE)
writeFileSync(file, `${JSON.stringify(configJsonSchema(), null, 2)}\n`)
// In the repository's format, so that `pnpm lint` passes on it (the test compares the parsed JSON).
spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', file], { stdio: 'ignore' })
process.stdout.write(`wrote ${file}\n`)
