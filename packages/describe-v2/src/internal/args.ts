import { DescribeErrorCodes } from '../errors.js'
import { envVariableName } from '../naming.js'
import type { ArgSpec, BackingType } from '../types.js'
import type { Load } from './load.js'
import { fail } from './load.js'
import type { RawArg } from './schema.js'
import { show } from './text.js'

const backingTypes: readonly string[] = ['string', 'number', 'integer', 'boolean'] satisfies BackingType[]

/** Unique names, and distinct environment variables for the `env`-mode arguments. */
function checkNames(raw: readonly RawArg[], at: string, load: Load): void {
  const byName = new Map<string, number>()
  const byVariable = new Map<string, number>()
  raw.forEach((arg, index) => {
    const first = byName.get(arg.name)
    if (first !== undefined) {
      const reason = `duplicate argument name ${show(arg.name)} (first at ${at}[${first}]); argument names must be unique`
      fail(load, DescribeErrorCodes.INVALID_FIELD, `${at}[${index}].name`, reason)
    }
    byName.set(arg.name, index)
    if (arg.mode !== 'env') return
    const variable = envVariableName(arg.name)
    const other = byVariable.get(variable)
    if (other !== undefined) {
      const reason =
        `arguments ${show(raw[other]?.name)} (${at}[${other}]) and ${show(arg.name)} both become the ` +
        `environment variable ${variable}; rename one of them`
      fail(load, DescribeErrorCodes.NAME_COLLISION, `${at}[${index}].name`, reason)
    }
    byVariable.set(variable, index)
  })
}

/**
 * An argument list as `ArgSpec`s. `at` is its JSON path (`$.args`, `$.commands[0].args`), `owner`
 * prefixes warnings about a command's arguments (`command "tail": `).
 */
export function argSpecs(raw: readonly RawArg[], at: string, owner: string, load: Load): ArgSpec[] {
  checkNames(raw, at, load)
  return raw.map((arg, index) => {
    let backingType: BackingType = 'string'
    if (backingTypes.includes(arg.backing_type)) backingType = arg.backing_type as BackingType
    else {
      load.warnings.push(
        `${at}[${index}].backing_type: ${show(arg.backing_type)} is not one of ${backingTypes.join(', ')}; ` +
          `${owner}argument ${show(arg.name)} is shown to the model as a string`,
      )
    }
    if (arg.mode === 'positional' && arg.arity === 'optional') {
      const later = raw.slice(index + 1).find((next) => next.mode === 'positional')
      if (later !== undefined) {
        load.warnings.push(
          `${at}[${index}].arity: ${owner}argument ${show(arg.name)} is an optional positional before the ` +
            `positional ${show(later.name)}; when it is omitted, ${show(later.name)} takes its place ` +
            '(v1 behaviour): make it a flag or required',
        )
      }
    }
    return {
      name: arg.name,
      description: arg.description,
      type: arg.type,
      backingType,
      arity: arg.arity,
      required: arg.arity === 'single',
      mode: arg.mode,
      ...(arg.allow_dash === true ? { allowDash: true } : {}),
    }
  })
}
