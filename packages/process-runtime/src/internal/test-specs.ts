/**
 * Prepared tools built directly, for tests (`@toolvisor/process-runtime/testing`): what
 * `runtime.prepare` would give for no declarations.
 */
import { dirname } from 'node:path'
import type { OutputSpec, ProcessSpec, ReadySpec, RuntimeSpec } from '@toolvisor/describe-v2'
import type { PreparedTool } from '../types.js'

/** An output spec of `framing`. */
export const output = (framing: OutputSpec['framing'], extra: Partial<OutputSpec> = {}): OutputSpec => ({
  framing,
  ...extra,
})

/** A process spec with defaults: oneshot, chunks, ready at exit. */
export function processSpec(spec: Partial<ProcessSpec> = {}): ProcessSpec {
  const mode = spec.mode ?? 'oneshot'
  const ready: ReadySpec = spec.ready ?? (mode === 'oneshot' ? { kind: 'exit' } : { kind: 'immediate' })
  return {
    mode,
    output: spec.output ?? output('chunks'),
    digest: { per: 'round' },
    ready,
    ...(spec.input ? { input: spec.input } : {}),
  }
}

/** A runtime spec with defaults: no environment, no timeouts, `onExit: report`, cancel by SIGTERM. */
export function runtimeSpec(spec: Partial<RuntimeSpec> = {}): RuntimeSpec {
  return { environment: {}, timeout: {}, onExit: 'report', cancel: { signal: 'SIGTERM' }, ...spec }
}

/** A prepared tool built directly (no describe run): what `runtime.prepare` would give for no declarations. */
export function preparedTool(
  path: string,
  parts: { process?: Partial<ProcessSpec>; runtime?: Partial<RuntimeSpec> } = {},
): PreparedTool {
  return {
    path,
    dir: dirname(path),
    name: path.split('/').pop()!,
    process: processSpec(parts.process),
    runtime: runtimeSpec(parts.runtime),
    environment: { inherit: 'all' },
  }
}
