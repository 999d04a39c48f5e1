import { DescribeErrorCodes } from '../errors.js'
import type { ProcessSpec, RuntimeSpec, SandboxDeclaration, TimeoutSpec } from '../types.js'
import type { Load } from './load.js'
import { fail } from './load.js'
import type { V2Document } from './schema.js'
import { show } from './text.js'

type RawRuntime = NonNullable<V2Document['runtime']>

/** The runtime of a tool that declares none: v1 behaviour. */
export function defaultRuntime(): RuntimeSpec {
  return { environment: {}, timeout: {}, onExit: 'report', cancel: { signal: 'SIGTERM' } }
}

function sandboxOf(raw: NonNullable<RawRuntime['sandbox']>): SandboxDeclaration {
  const declared: SandboxDeclaration['declared'][number][] = []
  if (raw.fs?.read !== undefined) declared.push('fs.read')
  if (raw.fs?.write !== undefined) declared.push('fs.write')
  if (raw.net !== undefined) declared.push('net')
  if (raw.tmp !== undefined) declared.push('tmp')
  return {
    fs: { read: raw.fs?.read ?? [], write: raw.fs?.write ?? [] },
    net: netOf(raw.net),
    tmp: raw.tmp ?? 'shared',
    declared,
  }
}

/** `net` with an allow list's absent parts empty. */
function netOf(raw: NonNullable<RawRuntime['sandbox']>['net']): SandboxDeclaration['net'] {
  if (raw === undefined) return 'host'
  if (typeof raw === 'string') return raw
  return { allow: raw.allow ?? [], deny: raw.deny ?? [], publish: [...new Set(raw.publish ?? [])] }
}

function timeoutOf(raw: RawRuntime['timeout']): TimeoutSpec {
  const timeout: { start?: number; stop?: number; idle?: number | null } = {}
  if (raw?.start !== undefined) timeout.start = raw.start
  if (raw?.stop !== undefined) timeout.stop = raw.stop
  if (raw?.idle !== undefined) timeout.idle = raw.idle
  return timeout
}

/** A `{"send": EVENT}` cancel must be something the process can read on its stdin. */
function checkCancelSend(send: unknown, process: ProcessSpec, load: Load): void {
  const field = '$.runtime.cancel.send'
  const { input } = process
  if (input === undefined) {
    const reason =
      'needs $.process.input: without it stdin is closed once the arguments are written, so the event cannot be sent'
    fail(load, DescribeErrorCodes.INVALID_FIELD, field, reason)
  }
  if (input.framing === 'lines' && (typeof send !== 'string' || /[\r\n]/.test(send))) {
    const reason = `expected one line of text (input framing is "lines"); got ${show(send)}`
    fail(load, DescribeErrorCodes.INVALID_FIELD, field, reason)
  }
  const mismatch = input.validate?.(send)
  if (mismatch !== undefined) {
    fail(load, DescribeErrorCodes.INVALID_FIELD, field, `does not match $.process.input.event: ${mismatch}`)
  }
}

/** `runtime` with its defaults (environment {}, no timeouts, on_exit report, cancel SIGTERM). */
export function runtimeOf(raw: V2Document['runtime'], process: ProcessSpec, load: Load): RuntimeSpec {
  if (raw === undefined) return defaultRuntime()
  const cancel = raw.cancel ?? { signal: 'SIGTERM' }
  if ('send' in cancel) checkCancelSend(cancel.send, process, load)
  // "report" is what happens to every tool that exits: only another value promises something.
  if (raw.on_exit !== undefined && raw.on_exit !== 'report' && process.mode !== 'service') {
    load.warnings.push(
      `$.runtime.on_exit is ignored: ${show(raw.on_exit)} applies to service tools, and this is a ${process.mode} tool`,
    )
  }
  const { run_as: runAs, sandbox, envdir, rundir } = raw
  const user =
    runAs && (runAs.group === undefined ? { user: runAs.user } : { user: runAs.user, group: runAs.group })
  return {
    ...(user === undefined ? {} : { runAs: user }),
    ...(sandbox === undefined ? {} : { sandbox: sandboxOf(sandbox) }),
    ...(envdir === undefined ? {} : { envdir }),
    environment: raw.environment ?? {},
    ...(rundir === undefined ? {} : { rundir }),
    timeout: timeoutOf(raw.timeout),
    onExit: raw.on_exit ?? 'report',
    cancel,
    ...(raw.limits === undefined ? {} : { limits: raw.limits }),
  }
}
