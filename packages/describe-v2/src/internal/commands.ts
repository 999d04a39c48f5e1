import { DescribeErrorCodes } from '../errors.js'
import { internalName } from '../naming.js'
import type { CommandSpec, ProcessSpec } from '../types.js'
import { argSpecs } from './args.js'
import type { Load } from './load.js'
import { fail } from './load.js'
import type { V2Document } from './schema.js'
import { show } from './text.js'

/** `commands`: unique names, `slug.name` internal names, and `send` kept free on a service. */
export function commandsOf(
  raw: V2Document['commands'],
  slug: string,
  mode: ProcessSpec['mode'],
  load: Load,
): CommandSpec[] {
  const seen = new Map<string, number>()
  return (raw ?? []).map((command, index) => {
    const field = `$.commands[${index}].name`
    const first = seen.get(command.name)
    if (first !== undefined) {
      const reason = `duplicate command name ${show(command.name)} (first at $.commands[${first}]); command names must be unique`
      fail(load, DescribeErrorCodes.INVALID_FIELD, field, reason)
    }
    seen.set(command.name, index)
    if (mode === 'service' && command.name === 'send') {
      const reason = `"send" is taken by the companion tool ${internalName(slug, 'send')} that every service gets; rename the command`
      fail(load, DescribeErrorCodes.NAME_COLLISION, field, reason)
    }
    return {
      name: command.name,
      internalName: internalName(slug, command.name),
      description: command.description,
      args: argSpecs(command.args, `$.commands[${index}].args`, `command ${show(command.name)}: `, load),
    }
  })
}
