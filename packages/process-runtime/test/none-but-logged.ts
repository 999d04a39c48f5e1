// The third mechanism of docs/guides/adding-a-sandbox-mechanism.md, verbatim: it enforces nothing
// and says so, logs every launch and marks the tool's environment. The runtime's tests run tools
// through it to prove the seam needs nothing more.
import type { Launch, SandboxMechanism } from '../src/index.js'

export function loggedMechanism(log: (line: string) => void): SandboxMechanism {
  return {
    name: 'none-but-logged',
    handlesRunAs: false,
    async qualify(policy) {
      // It enforces nothing, so it must refuse any declaration that asks for something.
      const asked = policy.declared.filter((field) => field !== 'run_as')
      if (asked.length > 0) {
        return {
          ok: false,
          field: asked[0]!,
          reason: 'none-but-logged enforces nothing',
          fix: 'use --sandbox bwrap',
        }
      }
      return { ok: true }
    },
    wrap(launch: Launch): Launch {
      log(`${launch.file} ${launch.args.join(' ')}`)
      return { ...launch, env: { ...launch.env, SANDBOXED_BY: 'none-but-logged' } }
    },
    async describe() {
      return {
        name: 'none-but-logged',
        available: true,
        enforces: {},
        gaps: ['enforces nothing: it only logs launches'],
      }
    },
  }
}
