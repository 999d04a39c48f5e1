// The runtime's test helpers: this package's vitest config sets TOOLVISOR_TEST_SPAWNER=native, so
// `makeRuntime` launches through this package's fork server (see process-runtime/test/helpers.ts);
// and reproducible random bytes, as the spill files' own tests (process-output) use them.
export { generator, randomBytes } from '../../process-output/test/random.js'
export * from '../../process-runtime/test/helpers.js'
