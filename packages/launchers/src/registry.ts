import { RuntimeError } from './errors.js'
import type { Launchers, RunAsMechanism, SandboxMechanism } from './launchers.js'

/** Creates an empty `launchers` registry. */
export function createLaunchers(): Launchers {
  const sandboxes = new Map<string, SandboxMechanism>()
  const runAs = new Map<string, RunAsMechanism>()
  const add = <M extends { readonly name: string }>(kind: string, map: Map<string, M>, mechanism: M) => {
    if (map.has(mechanism.name)) {
      throw new RuntimeError(
        'RUNTIME_ERR_DUPLICATE_MECHANISM',
        `a ${kind} mechanism named "${mechanism.name}" is already registered`,
      )
    }
    map.set(mechanism.name, mechanism)
    return () => {
      if (map.get(mechanism.name) === mechanism) map.delete(mechanism.name)
    }
  }
  return {
    registerSandbox: (mechanism) => add('sandbox', sandboxes, mechanism),
    registerRunAs: (mechanism) => add('run_as', runAs, mechanism),
    sandbox: (name) => sandboxes.get(name),
    sandboxes: () => [...sandboxes.values()],
    runAs: (name) => runAs.get(name),
    runAsMechanisms: () => [...runAs.values()],
  }
}
