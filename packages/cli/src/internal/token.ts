import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { CliError } from '../errors.js'

/** The token in `file`; a missing default file is made (mode 0600), a given one must exist. */
export function tokenIn(file: string, given: boolean, make = true): string {
  if (!existsSync(file)) {
    if (given || !make)
      throw new CliError(
        'CLI_ERR_USAGE',
        `--token-file ${file}: no such file${make ? '' : ' (toolvisor serve writes it when it starts)'}`,
      )
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 })
  }
  if ((statSync(file).mode & 0o077) !== 0) {
    throw new CliError(
      'CLI_ERR_USAGE',
      `--token-file ${file}: readable by others (mode ${(statSync(file).mode & 0o777).toString(8)}); chmod 600 it`,
    )
  }
  const token = readFileSync(file, 'utf8').trim()
  if (token.length < 16)
    throw new CliError('CLI_ERR_USAGE', `--token-file ${file}: the token must be at least 16 characters`)
  return token
}
