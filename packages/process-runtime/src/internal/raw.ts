import type { ProcessSpec } from '@toolvisor/describe-v2'

/** The process spec of `describe`, `check` and `help` runs: a oneshot whose stdout is taken whole. */
export const RAW_ONESHOT: ProcessSpec = {
  mode: 'oneshot',
  output: { framing: 'chunks' },
  digest: { per: 'round' },
  ready: { kind: 'exit' },
}
