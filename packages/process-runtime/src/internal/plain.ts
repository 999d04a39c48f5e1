import { dirname } from 'node:path'
import type {
  CancelSpec,
  Framing,
  LimitsSpec,
  RunAsDeclaration,
  SandboxDeclaration,
  TimeoutSpec,
} from '@toolvisor/describe-v2'
import type { PrepareInput } from '../types.js'
import type { EnvironmentPolicy } from './environment.js'

/**
 * A process no describe document declared (a shell command: `bash -c ...`), for `preparePlain`:
 * it becomes a prepared tool through the same checks and the same launch path as any tool.
 */
export interface PlainProcessSpec {
  /** The name in reports and tasks (`bash`). */
  readonly name: string
  /** The executable, absolute (`/bin/bash`). */
  readonly file: string
  /** `oneshot` (ready at exit, bounded by default) or `stream` (ready at once). Default `oneshot`. */
  readonly mode?: 'oneshot' | 'stream'
  /** How stdout is cut into events. Default `chunks`. */
  readonly framing?: Framing
  /** Literal variables, over the inherited ones. */
  readonly environment?: Readonly<Record<string, string>>
  readonly timeout?: TimeoutSpec
  /** The first step of a stop. Default SIGTERM. */
  readonly cancel?: CancelSpec
  readonly runAs?: RunAsDeclaration
  /** What it may touch (absolute paths), enforced by the configured mechanism as a tool's is. */
  readonly sandbox?: {
    readonly fs?: { readonly read?: readonly string[]; readonly write?: readonly string[] }
    /** `host`, `none`, or an allow list through the network gates (decision 0111). */
    readonly net?: SandboxDeclaration['net']
    /** `none`: no /tmp of the host (a private one where the mechanism has a mount namespace, else none). */
    readonly tmp?: 'shared' | 'private' | 'none'
    /**
     * A grant holding one of toolvisor's own paths below it (`/` does): `refuse` (the default),
     * or `mask` it inside, which a policy that reads `/` needs (see `PrepareInput.ownPaths`).
     */
    readonly ownPaths?: 'refuse' | 'mask'
  }
  /** The environment policy, over the runtime's. */
  readonly environmentPolicy?: EnvironmentPolicy
  /** The limits it runs under (the operator's: no ceiling applies); the rest are the runtime's defaults. */
  readonly limits?: LimitsSpec
}

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
      ...(spec.limits ? { limits: spec.limits } : {}),
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
    ...(sandbox?.ownPaths ? { ownPaths: sandbox.ownPaths } : {}),
  }
}
