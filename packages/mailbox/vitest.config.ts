import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    name: '@toolvisor/mailbox',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
})
