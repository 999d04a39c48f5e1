// The third mechanism of docs/guides/adding-a-sandbox-mechanism.md, verbatim: it enforces nothing
// and says so, and logs every launch. The runtime's tests run tools through it to prove the seam
// needs nothing more; `@toolvisor/process-runtime/testing` exports it for other packages' tests.
import type { Launch, SandboxMechanism } from '@toolvisor/launchers'

/**
 * The `none-but-logged` sandbox mechanism: it enforces nothing, refuses every declaration that asks
 * for something (so nothing is believed confined), and passes each launch to `log`. For tests of
 * the mechanism seam, and the example of the adding-a-sandbox-mechanism guide.
 */
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
      // The launch is the final exec stage: it carries the tool's environment and descriptors.
      log(`${launch.file} ${launch.args.join(' ')}`)
      return launch
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
