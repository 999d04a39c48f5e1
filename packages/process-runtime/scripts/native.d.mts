/** The compiler flags of a build without the C library (no start-up code, no stack protector). */
export declare const FREESTANDING: readonly string[]

/** What `compileNative` builds, and how it checks the result. */
export interface NativeBuild {
  /** The package that builds it, named in the warning and the fix when it cannot be built. */
  readonly pkg: string
  /** The binary's name in `outDir`. */
  readonly name: string
  /** The C source. */
  readonly source: string
  readonly outDir: string
  /** Runs the built binary; undefined when it works here, else why not. */
  readonly check: (binary: string) => string | undefined
  /** Try a static link first (a faster exec), falling back to a dynamic one. */
  readonly static?: boolean
  /** Try a build without the C library before that (the source brings its own start and system calls). */
  readonly freestanding?: boolean
}

/**
 * Compiles `source` into `outDir/name` with the system compiler; never throws for a missing
 * compiler or a failed build: `UNAVAILABLE` beside the binary records the reason and the fix.
 * Returns true when the binary was built and its check passed.
 */
export declare function compileNative(build: NativeBuild): boolean
