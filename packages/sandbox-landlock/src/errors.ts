import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws. */
export const LandlockErrorCodes = {
  /** `wrap` was asked while the launcher is missing or the kernel has no Landlock; `qualify` refuses the same. */
  UNAVAILABLE: 'LANDLOCK_ERR_UNAVAILABLE',
  /** `wrap` was asked for a policy a field of which Landlock cannot honour here; `qualify` refuses the same. */
  REFUSED: 'LANDLOCK_ERR_REFUSED',
  /** `wrap` was asked for a policy with a network allow list and a launch without the proxy's port (`Launch.network` of kind `port`). */
  NETWORK: 'LANDLOCK_ERR_NETWORK',
} as const

/** A code of this package. */
export type LandlockErrorCode = CodeOf<typeof LandlockErrorCodes>

/** An error of the Landlock mechanism. */
export class LandlockError extends errorFamily<LandlockErrorCode>('landlock') {}
