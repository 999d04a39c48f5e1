// A host out of file descriptors and the fork server: the launch's descriptors come back over the
// channel, and a process with no room for them never hears its answer. The launch fails at its
// deadline, alone, saying that (not "a filesystem that does not answer"), and is killed as any; the
// host lives on and launches again once descriptors are free.
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { builtForkServer } from '../src/native-spawner.js'

const script = `
  import { closeSync, openSync } from 'node:fs'
  import { ForkServer } from ${JSON.stringify(new URL('../dist/fork-server.js', import.meta.url).href)}
  const forks = new ForkServer(${JSON.stringify(builtForkServer)}, { deadlineMs: 1000 })
  const launch = { file: '/bin/echo', args: ['ok'], env: {}, cwd: '/', extraFds: [] }
  async function run() {
    const { child } = await forks.launch(launch)
    let out = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
    await Promise.all([new Promise((r) => child.once('exit', r)), new Promise((r) => child.stdout.once('close', r))])
    return out
  }
  await run()
  const held = []
  try { for (;;) held.push(openSync('/dev/null', 'r')) } catch {}
  let failure
  try { await run() } catch (error) { failure = { code: error.code, message: error.message } }
  for (const fd of held) closeSync(fd)
  process.stdout.write(JSON.stringify({ failure, out: await run() }) + '\\n')
  forks.close()
`

describe('the fork server and a host out of descriptors', () => {
  it('fails the launch at its deadline saying the host is out of descriptors, and launches again once they are free', () => {
    const run = spawnSync(
      'bash',
      ['-c', `ulimit -n 512 && exec "${process.execPath}" --input-type=module -e "$0"`, script],
      { encoding: 'utf8', timeout: 30_000 },
    )
    expect(run.status, run.stderr).toBe(0)
    const { failure, out } = JSON.parse(run.stdout)
    expect(failure.code).toBe('RUNTIME_ERR_LAUNCH_TIMEOUT')
    expect(failure.message).toMatch(
      /^the launch of \/bin\/echo did not start within 1 s: this process is out of file descriptors \((\d+ of 512 open|no room left even to count them)\), so the launch's descriptors could not reach it; it was killed, and no other launch waited for it; close some or raise the limit \(ulimit -n\)$/,
    )
    expect(out).toBe('ok\n')
  })
})
