// Start latency of a tiny process, direct vs through the Landlock launcher, with Node's spawn
// (as the runtime starts tools). Prints medians and the ratio to the direct baseline of the same run.
// Usage: node scripts/bench-start.mjs [runs]   (needs the package built)
import { spawnLaunch } from '@toolvisor/process-runtime'
import { landlockMechanism } from '../dist/index.js'

const runs = Number(process.argv[2] ?? 50)
const mechanism = landlockMechanism()
const description = await mechanism.describe()
if (!description.available) {
  process.stderr.write(`landlock unavailable: ${description.unavailable?.reason}\n`)
  process.exit(1)
}
const policy = {
  toolDir: '/usr/bin',
  executable: '/usr/bin/true',
  read: [],
  write: [],
  net: 'host',
  tmp: 'shared',
  declared: [],
}
const direct = { file: '/bin/true', args: [], env: { PATH: '/usr/bin:/bin' }, cwd: '/', extraFds: [] }
const wrapped = mechanism.wrap(direct, policy, undefined)
// The launcher refuses to run without its filter program: the minimal cases get the same one.
const program = wrapped.extraFds.find((fd) => fd.kind === 'data')
const minimal = {
  ...direct,
  file: wrapped.file,
  args: ['--seccomp-fd', '3', '--ro', '/usr', '--', '/bin/true'],
  extraFds: [program],
}
// With and without the pid namespace: the subreaper is what runs where none can be made.
const namespaced = { ...minimal, args: ['--seccomp-fd', '3', '--ro', '/usr', '--pid-ns', '--', '/bin/true'] }
const cases = {
  direct,
  'launcher --ro /usr (subreaper)': minimal,
  'launcher --ro /usr --pid-ns': namespaced,
  [`launcher as wrap() gives it (${wrapped.args.includes('--pid-ns') ? '--pid-ns' : 'subreaper'})`]: wrapped,
}

function once(launch) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    // The runtime's own spawn: the grant descriptors a wrapped launch names are opened and passed.
    const { child } = spawnLaunch(launch)
    child.stdin.end()
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${launch.file} exited ${code}`))
      else resolve(Number(process.hrtime.bigint() - started) / 1e6)
    })
  })
}

const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
for (const launch of Object.values(cases)) for (let i = 0; i < 5; i++) await once(launch) // warm up
for (let i = 0; i < runs; i++) {
  for (const [name, launch] of Object.entries(cases)) times[name].push(await once(launch))
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const base = median(times.direct)
process.stdout.write(`start latency, /bin/true, Node spawn, ${runs} runs each (interleaved), median:\n`)
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs)
  process.stdout.write(`  ${name.padEnd(42)} ${m.toFixed(2)} ms  x${(m / base).toFixed(2)}\n`)
}
