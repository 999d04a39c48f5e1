import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    name: '@toolvisor/describe-v2',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
})
