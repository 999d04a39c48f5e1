import { z } from 'zod'
import type { LimitsSpec } from './types.js'

/**
 * `runtime.limits` (decision 0097), and the operator's `limits` and `bash.limits` in
 * toolvisor.json, which read the same way: what a tool's whole process tree may use.
 *
 * - `memory`, `file_size`: bytes, as a whole number or a string with a binary unit: `"512M"`,
 *   `"2GiB"`, `"64k"` (K, M, G, T: powers of 1024; an optional `i` and `B`).
 * - `pids`: processes (and threads) the tree may hold at once; `open_files`: descriptors per
 *   process; both whole numbers from 1.
 * - `cpu`: a share of one core (`0.5`, `2`); `cpu_time`: seconds of CPU per process.
 */
const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }

/** Bytes of a size (`4096`, `"512M"`, `"1.5GiB"`), or a reason it is not one. */
export function parseSize(value: unknown): number | string {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value > 0
      ? value
      : `expected a whole number of bytes above 0; got ${value}`
  }
  if (typeof value !== 'string')
    return `expected bytes or a size such as "512M"; got ${JSON.stringify(value)}`
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(value)
  if (match === null)
    return `expected bytes or a size such as "512M" (K, M, G, T: powers of 1024); got ${JSON.stringify(value)}`
  const bytes = Math.floor(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!)
  return bytes > 0 && Number.isSafeInteger(bytes)
    ? bytes
    : `expected a size above 0 bytes; got ${JSON.stringify(value)}`
}

const size = z.unknown().transform((value, ctx): number => {
  const bytes = parseSize(value)
  if (typeof bytes === 'number') return bytes
  ctx.addIssue({ code: 'custom', message: bytes, input: value })
  return z.NEVER
})

const count = z.number().int().min(1)

const limitsObject = {
  memory: size.optional(),
  pids: count.optional(),
  cpu: z.number().positive().optional(),
  file_size: size.optional(),
  open_files: count.optional(),
  cpu_time: z.number().positive().optional(),
}

function toSpec(raw: z.output<z.ZodObject<typeof limitsObject>>): LimitsSpec {
  const out: { -readonly [K in keyof LimitsSpec]: LimitsSpec[K] } = {}
  if (raw.memory !== undefined) out.memory = raw.memory
  if (raw.pids !== undefined) out.pids = raw.pids
  if (raw.cpu !== undefined) out.cpu = raw.cpu
  if (raw.file_size !== undefined) out.fileSize = raw.file_size
  if (raw.open_files !== undefined) out.openFiles = raw.open_files
  if (raw.cpu_time !== undefined) out.cpuTime = raw.cpu_time
  return out
}

/**
 * The schema of a `limits` object: its keys as written (snake case), then {@link LimitsSpec}. In
 * a describe document an unknown key is a load warning (the document's rule); `strict` (the
 * operator's configuration) refuses it.
 */
export function limitsSchema(strict = false) {
  const object = z.object(limitsObject)
  return (strict ? object.strict() : object).transform(toSpec)
}

/** The keys of a `limits` object as written. */
export const LIMIT_KEYS = ['memory', 'pids', 'cpu', 'file_size', 'open_files', 'cpu_time'] as const

/** The written name of a {@link LimitsSpec} field (`fileSize` → `file_size`). */
export function limitKey(field: keyof LimitsSpec): (typeof LIMIT_KEYS)[number] {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) as (typeof LIMIT_KEYS)[number]
}
