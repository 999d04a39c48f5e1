import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code the bwrap mechanism throws. */
export const BwrapErrorCodes = {
  /** `wrap` got a policy path that is not absolute: the runtime must resolve sandbox paths first. */
  RELATIVE_PATH: 'BWRAP_ERR_RELATIVE_PATH',
  /** A declared path vanished between load and start; bwrap would abort with "Can't find source path". */
  PATH_MISSING: 'BWRAP_ERR_PATH_MISSING',
  /** A launch whose policy is a network allow list came without the runtime's network namespace. */
  NETWORK: 'BWRAP_ERR_NETWORK',
} as const

/** A bwrap mechanism error code. */
export type BwrapErrorCode = CodeOf<typeof BwrapErrorCodes>

/** An error of the bwrap mechanism, always with a `BWRAP_ERR_*` code. */
export class BwrapError extends errorFamily<BwrapErrorCode>('sandbox-bwrap') {}
