import { defineConfig, mergeConfig } from 'vitest/config'
import { packageConfig } from '../../vitest.package.mjs'

/**
 * This package's tests, and the runtime's behaviour tests run again on its fork server
 * (`TOOLVISOR_TEST_SPAWNER=native`, read by process-runtime/test/helpers.ts), so the native launch
 * path keeps the coverage it had inside the runtime (decision 0107).
 */
export default mergeConfig(
  packageConfig(import.meta.dirname),
  defineConfig({
    test: {
      include: [
        'test/**/*.test.ts',
        '../process-runtime/test/process.test.ts',
        '../process-runtime/test/descendants.test.ts',
        '../process-runtime/test/state.test.ts',
        '../process-runtime/test/real-pipes.test.ts',
        '../process-runtime/test/spill-cap.test.ts',
        '../process-runtime/test/spill-random.test.ts',
      ],
      env: { TOOLVISOR_TEST_SPAWNER: 'native' },
    },
  }),
)
