// The test configuration of every package: its name from its package.json, tests under src/ and
// test/, and a JSON report that `.ci/run` totals. Packages whose tests start real processes, users
// and sandboxes get longer per-test bounds (a bound, never a wait: tests wait for conditions).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'

/** The vitest config of the package in `dir`; `spawns`: its tests start processes. */
export function packageConfig(dir, { spawns = true } = {}) {
  const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  return defineConfig({
    test: {
      name,
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      ...(spawns ? { testTimeout: 30_000, hookTimeout: 30_000 } : {}),
      reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    },
  })
}
