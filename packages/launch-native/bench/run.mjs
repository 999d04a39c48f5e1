// launch-native's `pnpm bench`: process-runtime's benchmarks again, on this package's fork server
// (`BENCH_SPAWNER=native`; process-runtime's own `pnpm bench` runs them on Node's spawn, so one
// `pnpm bench` gives both), then what a cgroup per launch costs (cgroup-launch.mjs). Each runs in
// a process of its own; the exit status is the first failure's.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const runtimeBenches = ['jsonl', 'chunks', 'framing', 'memory', 'concurrency'].map((name) =>
  fileURLToPath(new URL(`../../process-runtime/bench/${name}.mjs`, import.meta.url)),
)
const own = [fileURLToPath(new URL('cgroup-launch.mjs', import.meta.url))]
let status = 0
for (const bench of [...runtimeBenches, ...own]) {
  const run = spawnSync(process.execPath, [bench], {
    stdio: 'inherit',
    env: { ...process.env, BENCH_SPAWNER: 'native' },
  })
  if (status === 0 && run.status !== 0) status = run.status ?? 1
}
process.exitCode = status
