/**
 * Helpers for tests of packages built on the runtime (`@toolvisor/process-runtime/testing`): they
 * need real users and real processes, never mocks. The runtime's own (prepared tools built
 * directly, the logged mechanism) are here; the generic ones are `@toolvisor/test-kit`'s, the dead
 * run `@toolvisor/run-state`'s and the boxes `@toolvisor/containment`'s, re-exported so that a test
 * imports them all from one place.
 */
export { markedProcesses } from '@toolvisor/containment'
export { box, boxesHere, type CgroupBox, forker } from '@toolvisor/containment/testing'
export { deadRun } from '@toolvisor/run-state/testing'
export {
  createTestUser,
  eventually,
  hasReader,
  processesInRun,
  processesRunning,
  processesWith,
  readableBy,
  sandboxUserDir,
  type TestUser,
  type UdpSink,
  type UnixDatagramSink,
  udpSink,
  unixDatagramSink,
  unreachableCheckout,
  within,
} from '@toolvisor/test-kit'
export { loggedMechanism } from './internal/logged-mechanism.js'
export { output, preparedTool, processSpec, runtimeSpec } from './internal/test-specs.js'
