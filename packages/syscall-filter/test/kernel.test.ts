/**
 * The program as the kernel runs it: installed with PR_SET_SECCOMP on a real process (the
 * fixture does what bwrap and the Landlock launcher do), then real calls and real programs. No
 * sandbox around it, so each answer is the filter's own.
 */

import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { type FilterOptions, syscallFilter } from '../src/index.js'

const fixture = fileURLToPath(new URL('./fixtures/under-filter.py', import.meta.url))
const place = mkdtempSync(join(tmpdir(), 'tv-syscall-filter-'))
afterAll(() => rmSync(place, { recursive: true, force: true }))

function programFile(options: FilterOptions): string {
  const file = join(place, `${options.net}-${options.ipc}.bpf`)
  writeFileSync(file, syscallFilter(options))
  return file
}

/** Runs `argv` under the program; a bound, never a wait (spawnSync's timeout). */
function under(options: FilterOptions, argv: string[]) {
  const run = spawnSync('/usr/bin/python3', [fixture, programFile(options), ...argv], {
    encoding: 'utf8',
    timeout: 20_000,
  })
  return { code: run.status, signal: run.signal, stdout: run.stdout, stderr: run.stderr }
}

const py = (code: string) => ['/usr/bin/python3', '-c', code]

const PROBE = `
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def show(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def sc(name, *args):
    r = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
show("socket unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM))
show("socket inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
show("socket netlink route", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
show("socket netlink netfilter", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12))
show("socket packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
show("socketpair dgram", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM))
show("socketpair stream", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC))
show("socketpair seqpacket", lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET))
sc("unshare user+net", 272, 0x50000000)
sc("unshare files", 272, 0x400)
sc("clone3", 435, None, 0)
sc("io_uring_setup", 425, 1, None)
print("shmget", "ok" if libc.shmget(0, 4096, 0o1600) >= 0 else errno.errorcode[ctypes.get_errno()])
sc("unknown 999", 999)
`

const x86 = process.arch === 'x64'

describe.skipIf(!x86)('the program under the real kernel (x86_64; python3)', () => {
  it('is accepted by the kernel in each variant and shows as one filter', () => {
    for (const net of ['none', 'host'] as const) {
      for (const ipc of ['namespaced', 'host'] as const) {
        const run = under({ net, ipc }, ['/usr/bin/grep', '^Seccomp', '/proc/self/status'])
        expect(run).toMatchObject({ code: 0, stderr: '', stdout: 'Seccomp:\t2\nSeccomp_filters:\t1\n' })
      }
    }
  })

  it('answers each argument rule and family as the table says (net host, ipc host: Landlock)', () => {
    const run = under({ net: 'host', ipc: 'host' }, py(PROBE))
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe(
      [
        'socket unix EPERM',
        'socket inet ok',
        'socket netlink route ok',
        'socket netlink netfilter EPERM',
        'socket packet EPERM',
        'socketpair dgram EPERM',
        'socketpair stream ok',
        'socketpair seqpacket ok',
        'unshare user+net EPERM',
        'unshare files ok',
        'clone3 ENOSYS',
        'io_uring_setup ENOSYS',
        'shmget EPERM',
        'unknown 999 ENOSYS',
        '',
      ].join('\n'),
    )
  })

  it('net none refuses every socket family, ipc namespaced allows SysV (bwrap)', () => {
    const run = under({ net: 'none', ipc: 'namespaced' }, py(PROBE))
    expect(
      run.stdout.split('\n').filter((line) => line.startsWith('socket') || line.startsWith('shm')),
    ).toEqual([
      'socket unix EPERM',
      'socket inet EPERM',
      'socket netlink route EPERM',
      'socket netlink netfilter EPERM',
      'socket packet EPERM',
      'socketpair dgram EPERM',
      'socketpair stream ok',
      'socketpair seqpacket ok',
      'shmget ok',
    ])
  })

  it('real programs still run: bash pipes and subshells, python threads and subprocess, node workers and child_process', () => {
    const options: FilterOptions = { net: 'host', ipc: 'host' }
    expect(under(options, ['/bin/bash', '-c', 'echo a | tr a b; (exit 4); echo "sub $?"']).stdout).toBe(
      'b\nsub 4\n',
    )
    const threads =
      'import threading, subprocess\nt = threading.Thread(target=print, args=("thread",)); t.start(); t.join()\nprint(subprocess.run(["/bin/echo", "child"], capture_output=True, text=True).stdout, end="")'
    expect(under(options, py(threads))).toMatchObject({ code: 0, stdout: 'thread\nchild\n' })
    const worker =
      "const { Worker } = require('node:worker_threads'); const { execFileSync } = require('node:child_process');" +
      "new Worker('require(\"node:worker_threads\").parentPort.postMessage(7)', { eval: true }).on('message', function (m) {" +
      " console.log('worker', m, execFileSync('/bin/echo', ['child']).toString().trim()); this.terminate() })"
    expect(under(options, [process.execPath, '-e', worker])).toMatchObject({
      code: 0,
      stdout: 'worker 7 child\n',
    })
  })
})
