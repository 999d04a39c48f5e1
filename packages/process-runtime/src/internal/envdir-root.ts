import { statSync } from 'node:fs'

/** How an envdir root that group or others may read or write is met (`--envdir-permissions`). */
export type EnvdirPermissions = 'refuse' | 'warn'

/**
 * The envdir root holds every tool's secrets, so, like the token file, nobody but its owner may
 * read or write it (decision 0092): one that group or others may is refused, or, when the operator
 * chose `warn`, accepted with a warning said once. Checked at the runtime's start, and again when a
 * tool that declares an envdir loads (a root made after the start is checked at its first use).
 */
export class EnvdirRootGuard {
  readonly #root: string | undefined
  readonly #permissions: EnvdirPermissions
  readonly #warn: (line: string) => void
  #warned = false

  constructor(options: {
    readonly root: string | undefined
    readonly permissions: EnvdirPermissions
    readonly warn: (line: string) => void
  }) {
    this.#root = options.root
    this.#permissions = options.permissions
    this.#warn = options.warn
  }

  /**
   * The refusal (a sentence naming the root, its mode and the fix) when the root is open to group
   * or others and refused; undefined when it is fine, missing, or accepted (the warning said).
   */
  refusal(): string | undefined {
    const root = this.#root
    if (root === undefined) return undefined
    let mode: number
    try {
      mode = statSync(root).mode & 0o7777
    } catch {
      return undefined // missing: a tool that declares an envdir under it is refused for that
    }
    if ((mode & 0o077) === 0) return undefined
    const what = `--envdir-root ${root}: readable or writable by group or others (mode 0${mode.toString(8)}), so any local user, and a bash command that reads /, can read every tool's secrets`
    if (this.#permissions === 'refuse')
      return `${what}: chmod 700 ${root}, or start toolvisor with --envdir-permissions warn to accept it`
    if (!this.#warned) this.#warn(`${what}: chmod 700 ${root} (accepted: --envdir-permissions warn)`)
    this.#warned = true
    return undefined
  }
}
