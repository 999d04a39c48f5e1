// The runtime's test helpers: this package's vitest config sets TOOLVISOR_TEST_SPAWNER=native, so
// `makeRuntime` launches through this package's fork server (see process-runtime/test/helpers.ts).
export * from '../../process-runtime/test/helpers.js'
