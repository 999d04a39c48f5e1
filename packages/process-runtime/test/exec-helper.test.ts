// toolvisor-exec, both builds of its one source (freestanding and over the C library), compiled
// with -Werror and run: the environment by length or to the end, descriptors closed, a failed
// exec on the status descriptor, setup failures.
import { spawnSync } from 'node:child_process'
import { openSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FREESTANDING } from '../scripts/native.mjs'
import { fixtures, tempDir } from './helpers.js'

const source = join(fixtures, '..', '..', 'native', 'toolvisor-exec.c')
const hasCc = spawnSync('cc', ['--version']).status === 0
const freestandingHere = process.arch === 'x64' || process.arch === 'arm64'

function build(flags: readonly string[]): string {
  const out = join(tempDir(), 'toolvisor-exec')
  const result = spawnSync(
    'cc',
    [...flags, '-std=gnu99', '-O2', '-Wall', '-Wextra', '-Werror', '-o', out, source],
    {
      encoding: 'utf8',
    },
  )
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return out
}

/** Runs the helper with `args`; `fds` become descriptors 3, 4, ... of it. */
function run(helper: string, args: string[], fds: Array<number | 'pipe'> = []) {
  const result = spawnSync(helper, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', ...fds] })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const builds = [
  ['freestanding', FREESTANDING as string[], freestandingHere],
  ['over the C library', ['-static'], true],
] as const

describe.each(builds)('toolvisor-exec, %s', (_name, flags, here) => {
  it.skipIf(!hasCc || !here)(
    'gives the tool exactly the environment it read, by length or to the end',
    () => {
      const helper = build(flags)
      const file = join(tempDir(), 'env')
      writeFileSync(file, 'A=1\0B=two words\0')
      const env = () => openSync(file, 'r')
      expect(run(helper, ['--env-bytes', '16', '--env-fd', '3', '--', '/usr/bin/env'], [env()])).toEqual({
        code: 0,
        stdout: 'A=1\nB=two words\n',
        stderr: '',
      })
      expect(run(helper, ['--env-fd', '3', '--', '/usr/bin/env'], [env()]).stdout).toBe('A=1\nB=two words\n')
      expect(run(helper, ['--env-bytes', '17', '--env-fd', '3', '--', '/usr/bin/env'], [env()])).toEqual({
        code: 125,
        stdout: '',
        stderr: 'toolvisor-exec: --env-fd: the environment ended before --env-bytes\n',
      })
      writeFileSync(file, 'NOEQUALS\0')
      expect(run(helper, ['--env-fd', '3', '--', '/usr/bin/env'], [env()]).stderr).toBe(
        "toolvisor-exec: --env-fd: an entry without '='\n",
      )
    },
  )

  it.skipIf(!hasCc || !here)(
    'closes every descriptor from 3 up, and reports a failed exec on the status descriptor',
    () => {
      const helper = build(flags)
      const listed = run(helper, ['--', '/bin/ls', '/proc/self/fd'], ['pipe', 'pipe', 'pipe'])
      expect(listed.stdout.split('\n').filter(Boolean)).toEqual(['0', '1', '2', '3']) // 3: ls's own
      const status = join(tempDir(), 'status')
      const failed = run(helper, ['--status-fd', '3', '--', '/nonexistent/tool'], [openSync(status, 'w')])
      expect(failed).toEqual({ code: 127, stdout: '', stderr: '' })
      expect(spawnSync('cat', [status], { encoding: 'utf8' }).stdout).toBe(
        'errno=2 No such file or directory',
      )
      expect(run(helper, ['--', '/nonexistent/tool'])).toEqual({
        code: 127,
        stdout: '',
        stderr: 'toolvisor-exec: exec /nonexistent/tool: No such file or directory\n',
      })
      expect(run(helper, ['--', '/etc']).code).toBe(126)
    },
  )

  it.skipIf(!hasCc || !here)(
    'reads the environment from the status descriptor, a socket, and answers on it',
    () => {
      const helper = build(flags)
      // As the runtime launches it: one socket pair both ways, the environment written and half-closed.
      const script = `const { spawn } = require('node:child_process');
      const c = spawn(process.argv[1], ['--status-fd', '3', '--env-bytes', '4', '--env-fd', '3', '--', process.argv[2]],
        { stdio: ['ignore', 'pipe', 'ignore', 'pipe'] });
      let status = ''; let out = '';
      c.stdio[3].setEncoding('utf8'); c.stdio[3].on('data', (d) => (status += d));
      c.stdout.setEncoding('utf8'); c.stdout.on('data', (d) => (out += d));
      c.stdio[3].end(Buffer.from('A=1\\0'));
      c.on('close', (code) => process.stdout.write(JSON.stringify({ code, status, out })))`
      const launch = (file: string) =>
        JSON.parse(spawnSync(process.execPath, ['-e', script, helper, file], { encoding: 'utf8' }).stdout)
      expect(launch('/usr/bin/env')).toEqual({ code: 0, status: '', out: 'A=1\n' })
      expect(launch('/nonexistent')).toEqual({
        code: 127,
        status: 'errno=2 No such file or directory',
        out: '',
      })
    },
  )

  it.skipIf(!hasCc || !here)('refuses a bad command line before running anything', () => {
    const helper = build(flags)
    const usage =
      'unknown option (usage: toolvisor-exec [--foreground] [--status-fd S] [--env-bytes L] [--env-fd N] -- FILE [ARGS...])'
    expect(run(helper, ['--bogus'])).toEqual({
      code: 125,
      stdout: '',
      stderr: `toolvisor-exec: --bogus: ${usage}\n`,
    })
    // The foreground of a terminal, asked of one that is not on a terminal: refused, nothing runs.
    expect(run(helper, ['--foreground', '--', '/bin/echo', 'ran'])).toEqual({
      code: 125,
      stdout: '',
      stderr: expect.stringMatching(/^toolvisor-exec: --foreground: .+\n$/),
    })
    expect(run(helper, ['--env-fd', '2', '--', '/bin/true']).stderr).toBe(
      'toolvisor-exec: --env-fd: expected a descriptor number >= 3\n',
    )
    expect(run(helper, ['--env-bytes', '-1', '--', '/bin/true']).stderr).toBe(
      'toolvisor-exec: --env-bytes: expected a number of bytes\n',
    )
    expect(run(helper, ['--', 'relative']).stderr).toBe(
      'toolvisor-exec: relative: the file must be an absolute path\n',
    )
    expect(run(helper, []).stderr).toBe('toolvisor-exec: usage: missing -- FILE\n')
  })
})
