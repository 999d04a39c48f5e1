/**
 * Unknown keys are allowed in a describe document, but a key that is one or two edits away from a
 * key the spec defines at that level (`proccess`, `runtim`, `backing-type`) is almost surely a
 * typo that silently changes what the tool is (a stream that loads as a oneshot): it becomes a
 * load warning with the key it was probably meant to be. So is a key of `process` or `runtime`
 * written at the top of the document (`"mode": "stream"` for `process.mode`), and a protocol 2
 * field in a document that does not say `"protocol": 2`, which is ignored.
 */

import { LIMIT_KEYS } from '../limits.js'
import { closeName, fold } from './similar.js'
import { isPlainObject, jsonPath } from './text.js'

/** The keys the spec defines at one level of the document, and the levels below them. */
interface Level {
  readonly keys: readonly string[]
  /** Keys that exist only under protocol 2 (ignored, with a warning, in a v1 document). */
  readonly v2?: readonly string[]
  /** Keys that belong one level down (`mode` at the top is `process.mode`), by their folded form. */
  readonly elsewhere?: Readonly<Record<string, string>>
  /** A key holding an object (`object`) or a list of objects (`each`) with keys of their own. */
  readonly below?: Readonly<Record<string, { readonly object: Level } | { readonly each: Level }>>
}

const plain = (...keys: string[]): { object: Level } => ({ object: { keys } })

const arg: Level = {
  keys: ['name', 'description', 'type', 'backing_type', 'arity', 'mode'],
  v2: ['allow_dash'],
}

const processLevel: Level = {
  keys: ['mode', 'output', 'input', 'digest', 'ready', 'terminal'],
  below: {
    output: plain('framing', 'event'),
    input: plain('framing', 'event'),
    digest: plain('per', 'n'),
    ready: plain('kind', 'match'),
    terminal: plain('columns', 'rows'),
  },
}

const runtimeLevel: Level = {
  keys: ['run_as', 'sandbox', 'envdir', 'environment', 'rundir', 'timeout', 'on_exit', 'cancel', 'limits'],
  below: {
    run_as: plain('user', 'group'),
    sandbox: { object: { keys: ['fs', 'net', 'tmp'], below: { fs: plain('read', 'write') } } },
    timeout: plain('start', 'stop', 'idle'),
    limits: plain(...LIMIT_KEYS),
  },
}

/** The keys of `process` and `runtime`, written at the top of the document by mistake. */
const misplaced: Record<string, string> = Object.fromEntries([
  ...processLevel.keys.map((key) => [fold(key), `process.${key}`]),
  ...runtimeLevel.keys.map((key) => [fold(key), `runtime.${key}`]),
])

const documentLevel: Level = {
  keys: ['protocol', 'slug', 'description', 'args', 'empty-result'],
  v2: ['check', 'help', 'commands', 'process', 'runtime'],
  elsewhere: misplaced,
  below: {
    args: { each: arg },
    'empty-result': plain('tag', 'contents'),
    commands: { each: { keys: ['name', 'description', 'args'], below: { args: { each: arg } } } },
    process: { object: processLevel },
    runtime: { object: runtimeLevel },
  },
}

/** Walks one object of the document at `level`; what is not an object is zod's to report. */
function walk(value: unknown, level: Level, at: PropertyKey[], protocol: 1 | 2, warnings: string[]): void {
  if (!isPlainObject(value)) return
  const v2 = level.v2 ?? []
  for (const key of Object.keys(value)) {
    const path = [...at, key]
    if (v2.includes(key) && protocol === 1) {
      warnings.push(
        `${jsonPath(path)}: ignored: it is a protocol 2 field and the document does not say "protocol": 2`,
      )
      continue
    }
    if (level.keys.includes(key) || v2.includes(key)) {
      const child = level.below?.[key]
      if (child === undefined) continue
      if ('object' in child) walk(value[key], child.object, path, protocol, warnings)
      else if (Array.isArray(value[key])) {
        value[key].forEach((item: unknown, index: number) => {
          walk(item, child.each, [...path, index], protocol, warnings)
        })
      }
      continue
    }
    const meant = level.elsewhere?.[fold(key)] ?? closeName(key, [...level.keys, ...v2])
    if (meant !== undefined)
      warnings.push(`${jsonPath(path)}: unknown key, ignored; did you mean "${meant}"?`)
  }
}

/**
 * The warnings for likely typos and ignored protocol 2 fields in a describe document, in
 * document order, each naming its JSON path (`$.proccess`, `$.args[0].backing-type`).
 */
export function unknownKeyWarnings(document: Record<string, unknown>, protocol: 1 | 2): string[] {
  const warnings: string[] = []
  walk(document, documentLevel, [], protocol, warnings)
  return warnings
}
