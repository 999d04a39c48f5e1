import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws. */
export const SeccompErrorCodes = {
  /** `syscallFilter` got an option outside its set (a JavaScript caller, or a policy not validated first). */
  OPTIONS: 'SECCOMP_ERR_OPTIONS',
  /** The program came out longer than the kernel's 4096 instructions (BPF_MAXINSNS): the kernel would refuse it. */
  TOO_LONG: 'SECCOMP_ERR_TOO_LONG',
} as const

/** A code of this package. */
export type SeccompErrorCode = CodeOf<typeof SeccompErrorCodes>

/** An error of the syscall filter, always with a `SECCOMP_ERR_*` code. */
export class SeccompError extends errorFamily<SeccompErrorCode>('syscall-filter') {}
