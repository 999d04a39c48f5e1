// Median start-to-exit time of /usr/bin/true spawned the way the runtime spawns a tool (its
// spawnLaunch: detached, stdio piped, grants opened), directly and through the full bwrap wrap (every namespace, net: none with its
// seccomp fd, tmp: private, info fd read by control()). Run after a build: `pnpm bench`.
import { performance } from 'node:perf_hooks'
import { spawnLaunch } from '@toolvisor/process-runtime'
import { bwrapMechanism } from '../dist/index.js'

const RUNS = Number(process.env.RUNS ?? 50)
const bwrap = bwrapMechanism()
const policy = {
  toolDir: '/usr/bin',
  executable: '/usr/bin/true',
  read: ['/usr/share'],
  write: ['/var/tmp'],
  net: 'none',
  tmp: 'private',
  declared: ['fs.read', 'fs.write', 'net', 'tmp'],
}
const direct = { file: '/usr/bin/true', args: [], env: { PATH: '/usr/bin' }, cwd: '/', extraFds: [] }
const wrapped = bwrap.wrap(direct, policy, undefined)

function once(launch) {
  const started = performance.now()
  // The runtime's own spawn: grant descriptors opened and pinned, data written, pipes kept.
  const { child, pipes } = spawnLaunch(launch)
  child.stdin.end()
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  if (launch !== direct) bwrap.control({ pid: child.pid, extraFds: pipes })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`exit ${code}: ${stderr}`)),
    )
  })
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const times = { direct: [], bwrap: [] }
for (let i = 0; i < 5; i++) await Promise.all([once(direct), once(wrapped)].map((p) => p.catch(() => 0)))
for (let i = 0; i < RUNS; i++) {
  times.direct.push(await once(direct))
  times.bwrap.push(await once(wrapped))
}
const d = median(times.direct)
const b = median(times.bwrap)
console.log(`start latency of /usr/bin/true, median of ${RUNS} runs each (Node spawn, interleaved):`)
console.log(`  direct              ${d.toFixed(2)} ms`)
console.log(`  bwrap, full wrap    ${b.toFixed(2)} ms  (x${(b / d).toFixed(1)}, +${(b - d).toFixed(2)} ms)`)
