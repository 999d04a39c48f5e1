import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { BinaryTools, LoadedTool } from '@toolvisor/toolbox'

/** What a probe found (spec §1.5, D9). */
export type CheckStatus = 'ok' | 'failed' | 'unverified' | 'skipped'

/** The result of a tool's `check`. */
export interface CheckResult {
  readonly status: CheckStatus
  /** How long the probe ran (absent when nothing ran). */
  readonly ms?: number
  /** For the operator: what went wrong. */
  readonly detail?: string
  /** For the operator: a prescription. */
  readonly fix?: string
  /** When it was measured (ms since the epoch). */
  readonly at: number
}

/**
 * The status of a tool that failed to load: `skipped` when the configured sandbox mechanism cannot
 * honour a declared field (spec §1.5), `failed` for anything else.
 */
export function loadFailureStatus(code: string): CheckStatus {
  return code === 'RUNTIME_ERR_SANDBOX' ? 'skipped' : 'failed'
}

/** The bound on one probe (ruling 20). */
export const CHECK_TIMEOUT_MS = 10_000

/**
 * Runs `TOOL check` exactly as the tool would run (its run_as, sandbox, envdir, timeouts), bounded
 * by `timeoutMs`. ok = exit 0 and `{"ok": true}`; a tool that does not declare `check` is
 * `unverified` (never ok) and nothing runs.
 */
export async function runCheck(
  binary: BinaryTools,
  loaded: LoadedTool,
  timeoutMs: number = CHECK_TIMEOUT_MS,
): Promise<CheckResult> {
  const at = Date.now()
  if (!loaded.spec.check)
    return {
      status: 'unverified',
      detail: 'the tool declares no check: it loaded, nothing more is known',
      at,
    }
  const began = performance.now()
  const process = binary.run(loaded, ['check'], { timeoutMs })
  const exit = await process.exit
  const ms = Math.round(performance.now() - began)
  const failed = (detail: string, fix?: string): CheckResult => ({
    status: 'failed',
    ms,
    detail,
    ...(fix ? { fix } : {}),
    at,
  })
  const stdout = process.stdout().head.toString('utf8').trim()
  const stderr = process.stderr().tail.toString('utf8').trim()
  if (exit.status === 'failed') return failed(`check could not run: ${exit.why}`)
  if (exit.reason === 'timeout')
    return failed(
      `check did not answer within ${timeoutMs / 1000} s`,
      'make check cheap and read-only, or fix what it waits for',
    )
  let answer: { ok?: unknown; detail?: unknown; fix?: unknown } | undefined
  try {
    const parsed: unknown = JSON.parse(stdout)
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      answer = parsed as typeof answer
  } catch {
    answer = undefined
  }
  const said = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined)
  if (exit.code !== 0) {
    const how = exit.code === null ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`
    const detail = said(answer?.detail) ?? (stderr || stdout || 'no output')
    return failed(`check ${how}: ${detail.slice(-500)}`, said(answer?.fix))
  }
  if (answer === undefined) {
    return failed(
      `check printed something that is not one JSON object: ${JSON.stringify(stdout.slice(0, 200))}`,
      'print {"ok": true} or {"ok": false, "detail": ..., "fix": ...}',
    )
  }
  if (answer.ok === true) return { status: 'ok', ms, at }
  return failed(said(answer.detail) ?? 'check answered ok: false without detail', said(answer.fix))
}

/**
 * Check results by tool path, valid for a TTL, kept in a file so that a probe that costs a network
 * call does not run on every start (the spec's open question: answered with a TTL, 10 min).
 */
export class CheckCache {
  readonly #file: string | undefined
  readonly #ttlMs: number
  #entries: Record<string, CheckResult> = {}

  constructor(options: { readonly file?: string; readonly ttlMs: number }) {
    this.#file = options.file
    this.#ttlMs = options.ttlMs
    if (this.#file) {
      try {
        this.#entries = JSON.parse(readFileSync(this.#file, 'utf8')) as Record<string, CheckResult>
      } catch {
        this.#entries = {}
      }
    }
  }

  /** A fresh result for `path`, if any. */
  get(path: string): CheckResult | undefined {
    const entry = this.#entries[path]
    return entry && Date.now() - entry.at < this.#ttlMs ? entry : undefined
  }

  set(path: string, result: CheckResult): void {
    this.#entries[path] = result
    if (!this.#file) return
    try {
      mkdirSync(dirname(this.#file), { recursive: true })
      const temp = `${this.#file}.${process.pid}.tmp`
      writeFileSync(temp, JSON.stringify(this.#entries))
      renameSync(temp, this.#file)
    } catch {
      // A cache that cannot be written only costs a probe next time.
    }
  }
}

/**
 * A tool's check result: the cached one while it is fresh, else a new run (then cached). `probe`
 * ignores the cache, as `check --probe` does.
 */
export async function cachedCheck(
  binary: BinaryTools,
  loaded: LoadedTool,
  cache: CheckCache,
  options: { readonly probe: boolean; readonly timeoutMs?: number | undefined },
): Promise<CheckResult> {
  const cached = options.probe ? undefined : cache.get(loaded.spec.path)
  if (cached) return cached
  const result = await runCheck(binary, loaded, options.timeoutMs)
  cache.set(loaded.spec.path, result)
  return result
}
