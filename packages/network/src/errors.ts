import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Every code this package throws or rejects with. */
export const NetworkErrorCodes = {
  /** `createProxy` or `open` got an option outside its set (a bound that is not a positive integer, a `listen` that is neither or both). */
  OPTIONS: 'NET_ERR_OPTIONS',
  /** `open` got rules with an entry `parseNetEntry` refuses; the message names each entry and why. */
  RULES: 'NET_ERR_RULES',
  /** A gate could not listen (the socket path exists or its directory does not); `cause` is the system's error. */
  LISTEN: 'NET_ERR_LISTEN',
  /** `open` after the proxy was closed. */
  CLOSED: 'NET_ERR_CLOSED',
} as const

/** A code of this package. */
export type NetworkErrorCode = CodeOf<typeof NetworkErrorCodes>

/** An error of the network package, always with a `NET_ERR_*` code. */
export class NetworkError extends errorFamily<NetworkErrorCode>('network') {}
