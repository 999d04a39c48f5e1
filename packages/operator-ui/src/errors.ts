import { type CodeOf, errorFamily } from '@toolvisor/kernel'

/** Codes of the errors the operator page throws. */
export const UiErrorCodes = {
  /** `operatorPage` got options it cannot serve with (a token shorter than 16 characters). */
  INVALID_OPTIONS: 'UI_ERR_INVALID_OPTIONS',
  /** The page's files (`assets/` of the package) are missing: a broken install. */
  ASSETS_MISSING: 'UI_ERR_ASSETS_MISSING',
} as const

/** A code of the operator page. */
export type UiErrorCode = CodeOf<typeof UiErrorCodes>

/** An error of the operator page. */
export class UiError extends errorFamily<UiErrorCode>('operator-ui') {}
