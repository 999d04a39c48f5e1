import { createHash, randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** The cookie of a page login: a random key, never the token. */
export const COOKIE = 'toolvisor_ui'

/** A browser logged in through the form. */
export interface Login {
  /** `login 3`: how the log names it (never the key). */
  readonly name: string
  /** The address it logged in from. */
  readonly from: string
  readonly at: Date
}

interface Entry {
  readonly login: Login
  seen: number
}

/** Wrong logins are logged at most once this often. */
const REFUSALS_EVERY_MS = 10_000

const digest = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')

/**
 * The logins of the page: each a 256-bit random key the browser holds in an HttpOnly,
 * SameSite=Strict cookie, kept here by its SHA-256 only (a look-up leaks nothing of a key). A
 * login unused for `idleMs` ends; past `max` logins the least recently used one ends.
 */
export class Logins {
  readonly #entries = new Map<string, Entry>()
  readonly #idleMs: number
  readonly #max: number
  #count = 0
  #refused = 0
  #refusedSaidAt = 0

  constructor(idleMs: number, max = 64) {
    this.#idleMs = idleMs
    this.#max = max
  }

  /** A new login from `from`; returns the key for its cookie. */
  open(from: string): { key: string; login: Login } {
    const key = randomBytes(32).toString('base64url')
    const login: Login = { name: `login ${++this.#count}`, from, at: new Date() }
    this.#entries.set(digest(key), { login, seen: Date.now() })
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value!)
    return { key, login }
  }

  /** The login the request's cookie holds, if it is one and still alive. */
  find(request: IncomingMessage): Login | undefined {
    const key = cookieOf(request)
    if (key === undefined) return undefined
    const hash = digest(key)
    const entry = this.#entries.get(hash)
    if (entry === undefined) return undefined
    if (Date.now() - entry.seen > this.#idleMs) {
      this.#entries.delete(hash)
      return undefined
    }
    entry.seen = Date.now()
    // Most recently used last: the first is the one to end past `max`.
    this.#entries.delete(hash)
    this.#entries.set(hash, entry)
    return entry.login
  }

  /**
   * The log line for a login refused (a wrong token), or none: the first one says so at once, then
   * at most one line every {@link REFUSALS_EVERY_MS} counts what came meanwhile, so a guesser
   * cannot flood the log.
   */
  refused(from: string): string | undefined {
    this.#refused += 1
    const now = Date.now()
    if (now - this.#refusedSaidAt < REFUSALS_EVERY_MS) return undefined
    const count = this.#refused
    this.#refused = 0
    this.#refusedSaidAt = now
    return `toolvisor: operator page: ${count === 1 ? 'a login' : `${count} logins`} with a wrong token (the last from ${from})`
  }

  /** Ends the login the request's cookie holds. */
  close(request: IncomingMessage): void {
    const key = cookieOf(request)
    if (key !== undefined) this.#entries.delete(digest(key))
  }
}

/** The `Set-Cookie` value of a login key. */
export function loginCookie(key: string): string {
  return `${COOKIE}=${key}; Path=/ui; HttpOnly; SameSite=Strict`
}

/** The `Set-Cookie` value that removes the login cookie. */
export function clearedCookie(): string {
  return `${COOKIE}=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0`
}

/** The page's cookie in a request, if it carries one. */
function cookieOf(request: IncomingMessage): string | undefined {
  const header = request.headers.cookie
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === COOKIE) {
      const value = part.slice(at + 1).trim()
      return /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined
    }
  }
  return undefined
}
