const marker = Symbol.for('toolvisor.error')

/**
 * The base of every toolvisor error. Each package subclasses it once with its own code table;
 * `is()` recognises instances across copies of a package (two installed versions, a bundled
 * copy), because it checks a `Symbol.for` marker instead of the prototype chain.
 */
export class ToolvisorError<Code extends string = string> extends Error {
  /** The family this error class belongs to; `is()` on a subclass matches only its family. */
  static readonly family: string = '*'
  /** The stable, documented code (`KERNEL_ERR_DUPLICATE_PROVIDER`, ...). */
  readonly code: Code
  declare readonly [marker]: string

  constructor(code: Code, message: string, options?: ErrorOptions) {
    super(message, options)
    this.code = code
    const family = (new.target as typeof ToolvisorError).family
    Object.defineProperty(this, marker, { value: family, enumerable: false })
    this.name = new.target.name
  }

  /** True when `error` is an instance of this class (or of its family), from any copy. */
  static is<T extends abstract new (...args: never[]) => ToolvisorError>(
    this: T & { readonly family: string },
    error: unknown,
  ): error is InstanceType<T> {
    if (typeof error !== 'object' || error === null) return false
    const family = (error as { [marker]?: unknown })[marker]
    if (typeof family !== 'string') return false
    return this.family === '*' || family === this.family
  }
}

/** The code type of a codes table: `CodeOf<typeof RuntimeErrorCodes>` is `'RUNTIME_ERR_...' | ...`. */
export type CodeOf<Table extends Readonly<Record<string, string>>> = Table[keyof Table]

/**
 * The error class of one family, extended once per package so that `is()` tells the families
 * apart: `export class RuntimeError extends errorFamily<RuntimeErrorCode>('runtime') {}`.
 */
export function errorFamily<Code extends string>(family: string): typeof ToolvisorError<Code> {
  return class extends ToolvisorError<Code> {
    static override readonly family: string = family
  }
}

/** Every code the kernel throws or rejects with. */
export const KernelErrorCodes = {
  /** `use()` got a config its plugin's schema refuses; the message names the bad field. */
  INVALID_CONFIG: 'KERNEL_ERR_INVALID_CONFIG',
  /** Two plugins provide the same token; the message names both. */
  DUPLICATE_PROVIDER: 'KERNEL_ERR_DUPLICATE_PROVIDER',
  /** A plugin provided a token it did not list in `provides`. */
  UNDECLARED_PROVIDE: 'KERNEL_ERR_UNDECLARED_PROVIDE',
  /** A plugin's `apply` threw; `cause` is what it threw. */
  PLUGIN_FAILED: 'KERNEL_ERR_PLUGIN_FAILED',
  /** The plugin (or the kernel) was disposed before it became active, or a context was used after unload. */
  DISPOSED: 'KERNEL_ERR_DISPOSED',
  /** One or more disposers threw; `errors` holds every one of them. */
  DISPOSE_FAILED: 'KERNEL_ERR_DISPOSE_FAILED',
  /** `ready()` gave up: plugins still wait for tokens nobody provides; the message names them. */
  PENDING: 'KERNEL_ERR_PENDING',
  /** `require()` found no active provider of the token; the message says whether one is pending or none was used. */
  NOT_PROVIDED: 'KERNEL_ERR_NOT_PROVIDED',
} as const

/** A kernel error code. */
export type KernelErrorCode = CodeOf<typeof KernelErrorCodes>

/** An error thrown or rejected by the kernel, always with a `KERNEL_ERR_*` code. */
export class KernelError extends ToolvisorError<KernelErrorCode> {
  static override readonly family = 'kernel'
  /** For `KERNEL_ERR_DISPOSE_FAILED`: every error the disposers threw, in the order they ran. */
  readonly errors: readonly unknown[]

  constructor(
    code: KernelErrorCode,
    message: string,
    options?: ErrorOptions & { errors?: readonly unknown[] },
  ) {
    super(code, message, options)
    this.errors = options?.errors ?? []
  }
}
