import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { RuntimeErrorCodes } from '@toolvisor/process-runtime'
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
 * honour a declared field (spec §1.5), `failed` for anything else, a sandbox declared with no
 * mechanism configured included (the tool does not load: nothing was skipped).
 */
export function loadFailureStatus(code: string, sandbox: string | undefined): CheckStatus {
  return code === RuntimeErrorCodes.SANDBOX && sandbox !== undefined ? 'skipped' : 'failed'
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
  const stdout = process.output.stdout().head.toString('utf8').trim()
  const stderr = process.output.stderr().tail.toString('utf8').trim()
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
 * What a check result is cached under: everything that changes how the tool runs, not only its
 * path. The file itself (its real path, inode, size, mtime), its describe document, and what
 * `prepare` made of it under this configuration: the sandbox mechanism and policy, who it runs as
 * and by which mechanism, the envdir (under the envdir root), the environment policy.
 */
export function checkKey(loaded: LoadedTool): string {
  const { spec, prepared, describeHash } = loaded
  let file: { ino: number; size: number; mtimeMs: number } | null = null
  try {
    const stat = statSync(spec.path)
    file = { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs }
  } catch {
    file = null // gone since load: the run will say so; nothing cached matches it
  }
  const facts = {
    path: spec.path,
    file,
    describeHash,
    sandbox: prepared.sandbox
      ? { mechanism: prepared.sandbox.mechanism.name, policy: prepared.sandbox.policy }
      : null,
    runAs: prepared.runAs
      ? { target: prepared.runAs.target, mechanism: prepared.runAs.mechanism?.name ?? null }
      : null,
    envdir: prepared.envdir ?? null,
    environment: prepared.environment,
    rundir: prepared.rundir ?? null,
  }
  return createHash('sha256').update(JSON.stringify(facts)).digest('hex')
}

/** A cached result, with the path it was measured for (for operators reading the file). */
interface CacheEntry extends CheckResult {
  readonly path: string
}

/**
 * Check results by {@link checkKey}, valid for a TTL, kept in a file so that a probe that costs a
 * network call does not run on every start (the spec's open question: answered with a TTL, 10
 * min). Within one cache (one `toolvisor check`, one start) a tool is probed once, however many
 * capabilities list it, `probe` or not.
 */
export class CheckCache {
  readonly #file: string | undefined
  readonly #ttlMs: number
  #entries: Record<string, CacheEntry> = {}
  readonly #measured = new Map<string, Promise<CheckResult>>()

  constructor(options: { readonly file?: string; readonly ttlMs: number }) {
    this.#file = options.file
    this.#ttlMs = options.ttlMs
    if (this.#file) {
      try {
        this.#entries = JSON.parse(readFileSync(this.#file, 'utf8')) as Record<string, CacheEntry>
      } catch {
        this.#entries = {}
      }
    }
  }

  /** A fresh result under `key`, if any. */
  get(key: string): CheckResult | undefined {
    const entry = this.#entries[key]
    return entry && this.#fresh(entry) ? entry : undefined
  }

  /** Keeps a result under `key`; stale entries leave the file as it is written. */
  set(key: string, path: string, result: CheckResult): void {
    this.#entries = Object.fromEntries(
      Object.entries(this.#entries).filter(([, entry]) => this.#fresh(entry)),
    )
    this.#entries[key] = { ...result, path }
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

  /** The result measured under `key` during this cache's life, or `measure()`'s, remembered. */
  once(key: string, measure: () => Promise<CheckResult>): Promise<CheckResult> {
    let result = this.#measured.get(key)
    if (result === undefined) {
      result = measure()
      this.#measured.set(key, result)
    }
    return result
  }

  #fresh(entry: CheckResult): boolean {
    return Date.now() - entry.at < this.#ttlMs
  }
}

/**
 * A tool's check result: the one measured already by this cache, else the cached one while it is
 * fresh, else a new run (then cached). `probe` ignores the file, as `check --probe` does.
 */
export function cachedCheck(
  binary: BinaryTools,
  loaded: LoadedTool,
  cache: CheckCache,
  options: { readonly probe: boolean; readonly timeoutMs?: number | undefined },
): Promise<CheckResult> {
  const key = checkKey(loaded)
  return cache.once(key, async () => {
    const cached = options.probe ? undefined : cache.get(key)
    if (cached) return cached
    const result = await runCheck(binary, loaded, options.timeoutMs)
    cache.set(key, loaded.spec.path, result)
    return result
  })
}
