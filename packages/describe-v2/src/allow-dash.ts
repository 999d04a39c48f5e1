/**
 * The operator's `allowDash` override (decision 0099): arguments of a loaded tool whose values may
 * start with `-`, as if the tool had declared `"allow_dash": true` on them. It is how a v1 tool
 * that takes free text positionally (a file's content, a Markdown list, a diff) receives it.
 */
import type { ArgSpec, ToolSpec } from './types.js'

/** What the override did to one tool. */
export interface AllowDashOutcome {
  /** The tool with `allowDash` set on every argument the override reached. */
  readonly spec: ToolSpec
  /**
   * The arguments the override changed (`name`, or `command.name` for a sub-command's): one that
   * declares `allow_dash` itself is not among them.
   */
  readonly allowed: readonly string[]
  /** Why a name of the override reached nothing (no such argument, a mode that takes no dash). */
  readonly warnings: readonly string[]
}

/** Whether a leading dash can matter for `arg`: a word of its own in argv, and not a number. */
function takesDash(arg: ArgSpec): boolean {
  const ownWord = arg.mode === 'positional' || arg.mode === 'dashdashspace'
  return ownWord && arg.backingType !== 'number' && arg.backingType !== 'integer'
}

/**
 * `spec` with `allowDash` set on the arguments `names` picks: `true` picks every `positional` or
 * `dashdashspace` string or boolean argument, of the tool and of each sub-command; a list picks
 * each argument of that name wherever it is declared. A name that matches no argument, or only
 * arguments the refusal never applies to (`dashdashequal`, `stdin`, `env`, numbers), is a warning.
 *
 * @example
 * ```ts
 * allowDashFor(spec, ['content']).allowed // ['content']
 * ```
 */
export function allowDashFor(spec: ToolSpec, names: true | readonly string[]): AllowDashOutcome {
  const picked = (arg: ArgSpec) => takesDash(arg) && (names === true || names.includes(arg.name))
  const allowed: string[] = []
  const mark = (args: readonly ArgSpec[], prefix: string): ArgSpec[] =>
    args.map((arg) => {
      if (!picked(arg) || arg.allowDash === true) return arg
      allowed.push(prefix + arg.name)
      return { ...arg, allowDash: true }
    })
  const args = mark(spec.args, '')
  const commands = spec.commands.map((command) => ({
    ...command,
    args: mark(command.args, `${command.name}.`),
  }))
  const warnings: string[] = []
  const every = [...spec.args, ...spec.commands.flatMap((command) => command.args)]
  for (const name of names === true ? [] : new Set(names)) {
    const declared = every.filter((arg) => arg.name === name)
    if (declared.length === 0) {
      const known = [...new Set(every.map((arg) => arg.name))]
      const list = known.length === 0 ? 'it takes no arguments' : `its arguments are ${known.join(', ')}`
      warnings.push(`allowDash names "${name}", which ${spec.slug} does not declare (${list})`)
    } else if (!declared.some(takesDash)) {
      const modes = [...new Set(declared.map((arg) => `${arg.mode} ${arg.backingType}`))].join(', ')
      warnings.push(
        `allowDash names "${name}", a ${modes} argument, which the refusal never applies to (only a non-numeric value that is a word of its own in argv is refused), so nothing changes`,
      )
    }
  }
  return { spec: { ...spec, args, commands }, allowed, warnings }
}
