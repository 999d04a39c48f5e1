import { dirname } from 'node:path'
import type { PlainProcessSpec, PrepareInput } from './types.js'

/** The PrepareInput of a plain process: a describe-free declaration, checked as any tool's. */
export function plainInput(spec: PlainProcessSpec): PrepareInput {
  const mode = spec.mode ?? 'oneshot'
  const sandbox = spec.sandbox
  const declared: ('fs.read' | 'fs.write' | 'net' | 'tmp')[] = []
  if (sandbox?.fs?.read !== undefined) declared.push('fs.read')
  if (sandbox?.fs?.write !== undefined) declared.push('fs.write')
  if (sandbox?.net !== undefined) declared.push('net')
  if (sandbox?.tmp !== undefined) declared.push('tmp')
  return {
    path: spec.file,
    dir: dirname(spec.file),
    slug: spec.name,
    process: {
      mode,
      output: { framing: spec.framing ?? 'chunks' },
      digest: { per: 'round' },
      ready: mode === 'oneshot' ? { kind: 'exit' } : { kind: 'immediate' },
    },
    runtime: {
      environment: spec.environment ?? {},
      timeout: spec.timeout ?? {},
      onExit: 'report',
      cancel: spec.cancel ?? { signal: 'SIGTERM' },
      ...(spec.runAs ? { runAs: spec.runAs } : {}),
      ...(sandbox
        ? {
            sandbox: {
              fs: { read: sandbox.fs?.read ?? [], write: sandbox.fs?.write ?? [] },
              net: sandbox.net ?? 'host',
              tmp: sandbox.tmp ?? 'shared',
              declared,
            },
          }
        : {}),
    },
    ...(spec.environmentPolicy ? { environment: spec.environmentPolicy } : {}),
  }
}
