/** The x86_64 syscall numbers of this machine's `<asm/unistd_64.h>`, or undefined without it. */
export function x86_64(): Record<string, number> | undefined
/** The aarch64 syscall numbers of this machine's `<asm-generic/unistd.h>` (through cc -E), or undefined. */
export function aarch64(): Record<string, number> | undefined
