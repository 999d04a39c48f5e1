/** Codes of this package: the LoadingErrors it throws carry them. */
export const CapabilityErrorCodes = {
  /** Two backends of one capability disagree on what the model sees; the argument is named. */
  ARGS_DIFFER: 'CAPABILITY_ERR_ARGS_DIFFER',
  /** A required capability has no usable backend. */
  NO_BACKEND: 'CAPABILITY_ERR_NO_BACKEND',
  /** A backend cannot serve a capability (it has sub-commands, it is a stream or service). */
  BAD_BACKEND: 'CAPABILITY_ERR_BAD_BACKEND',
  /** Two capabilities of one name, or a capability named like a tool or a reserved name (`help`, `processes`). */
  DUPLICATE: 'CAPABILITY_ERR_DUPLICATE',
} as const

/** A code of this package. */
export type CapabilityErrorCode = (typeof CapabilityErrorCodes)[keyof typeof CapabilityErrorCodes]

/** The code of this package's load warnings: an override naming no backend or capability, an optional capability left out. */
export const CapabilityWarningCodes = {
  WARNING: 'CAPABILITY_WARN',
} as const
