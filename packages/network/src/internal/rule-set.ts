import { type NetEntry, type NetRules, parseNetEntry } from '../rules.js'
import type { Host } from './host.js'
import { addressKey } from './reserved.js'

/**
 * What the rules say of a host and port. `allow` carries whether the entry that allowed it named
 * the host itself (an exact name, the literal address, or an operator's approval of that host and
 * port): only then may it lead to a local or reserved address.
 */
export type Verdict =
  | { readonly kind: 'deny' }
  | { readonly kind: 'allow'; readonly named: boolean }
  | { readonly kind: 'unlisted' }

/** How an entry matches a host and port: it names the host, covers it by wildcard, or not at all. */
function match(entry: NetEntry, target: Host, port: number): 'named' | 'covered' | undefined {
  if (entry.port !== undefined && entry.port !== port) return undefined
  if (entry.kind === 'address') {
    return target.kind === 'address' && addressKey(entry.host) === addressKey(target.host)
      ? 'named'
      : undefined
  }
  if (target.kind !== 'name') return undefined
  if (entry.kind === 'name') return entry.host === target.host ? 'named' : undefined
  return target.host.endsWith(`.${entry.host}`) ? 'covered' : undefined
}

/** One gate's rules, parsed once, with the names its operator approved for the session. */
export class RuleSet {
  readonly #allow: readonly NetEntry[]
  readonly #deny: readonly NetEntry[]
  /** Approved through `ask` for the session, each as an exact entry with its port. */
  readonly #approved: NetEntry[] = []

  private constructor(allow: readonly NetEntry[], deny: readonly NetEntry[]) {
    this.#allow = allow
    this.#deny = deny
  }

  /** The rules parsed, or each bad entry with its place and why (`allow[2]: "*" would allow ...`). */
  static parse(rules: NetRules): RuleSet | string[] {
    const problems: string[] = []
    const parsed = (key: 'allow' | 'deny') =>
      rules[key].flatMap((text, index) => {
        const entry = parseNetEntry(text)
        if (typeof entry !== 'string') return [entry]
        problems.push(`${key}[${index}]: ${entry}`)
        return []
      })
    const set = new RuleSet(parsed('allow'), parsed('deny'))
    return problems.length > 0 ? problems : set
  }

  /** What the rules say of `target` at `port`: the deny list first, then the allow list, then approvals. */
  verdict(target: Host, port: number): Verdict {
    if (this.#deny.some((entry) => match(entry, target, port) !== undefined)) return { kind: 'deny' }
    let covered = false
    for (const entry of this.#allow) {
      const how = match(entry, target, port)
      if (how === 'named') return { kind: 'allow', named: true }
      if (how === 'covered') covered = true
    }
    if (covered) return { kind: 'allow', named: false }
    if (this.#approved.some((entry) => match(entry, target, port) !== undefined))
      return { kind: 'allow', named: true }
    return { kind: 'unlisted' }
  }

  /** Adds `target:port` to the approvals, as an answer `session` to `ask` does. */
  approve(target: Host, port: number): void {
    if (this.#approved.some((entry) => match(entry, target, port) !== undefined)) return
    this.#approved.push({ kind: target.kind, host: target.host, port })
  }

  /** Whether a deny entry names `address` (a name's resolved address) at `port`. */
  deniesAddress(address: string, port: number): boolean {
    const target: Host = { kind: 'address', host: address }
    return this.#deny.some((entry) => entry.kind === 'address' && match(entry, target, port) !== undefined)
  }
}
