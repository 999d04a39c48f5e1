/**
 * The syscall filter as the attacker of the 2026-12-01 review tried it (issue 26, findings F3 and
 * F11), through the CLI's composition root as root and through `toolvisor call` as an ordinary
 * user, under both mechanisms: a datagram socket pair that reaches host datagram sockets by path
 * and by abstract name (F3, the report's uxs.py and dgl2.py), namespaces a Landlock tool could
 * create (F11, userns.py), and the families the allowlist refuses on purpose. Listeners, keys and
 * queues are the test's own; nothing outside the test's directories is changed.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { type Runtime, RuntimeToken } from '@toolvisor/process-runtime'
import {
  markedProcesses,
  processesWith,
  type UnixDatagramSink,
  unixDatagramSink,
} from '@toolvisor/process-runtime/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser, seenAs, userDir } from './as-user.js'
import { bin, eventually } from './helpers.js'
import { dir, hasBwrap, isRoot, load, type Mechanism, mechanisms, sandboxedTool } from './sandbox-helpers.js'

const sh = (code: string, args: readonly string[] = []) =>
  `/usr/bin/python3 -c '${code.replaceAll("'", "'\\''")}' ${args.join(' ')} 2>&1`

/** The report's uxs.py, step 2: a datagram pair, then sendto(path) and connect(path) to each target. */
const F3 = [
  'import errno, os, socket, sys',
  'for t in sys.argv[1:]:',
  '    addr = "\\0" + t[1:] if t.startswith("@") else t',
  '    try:',
  '        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)',
  '    except OSError as e:',
  '        print(t, "socketpair", errno.errorcode[e.errno]); continue',
  '    try:',
  '        a.sendto(b"F3 sendto from uid %d" % os.getuid(), addr); print(t, "sendto SENT")',
  '    except OSError as e: print(t, "sendto", errno.errorcode[e.errno])',
  '    try:',
  '        a.connect(addr); a.send(b"F3 connect from uid %d" % os.getuid()); print(t, "connect SENT")',
  '    except OSError as e: print(t, "connect", errno.errorcode[e.errno])',
  'for kind in ("SOCK_STREAM", "SOCK_SEQPACKET"):',
  '    a, b = socket.socketpair(socket.AF_UNIX, getattr(socket, kind)); a.send(b"x")',
  '    print(kind, "pair", b.recv(1).decode())',
].join('\n')

/** The report's userns.py, and the other ways into a namespace: clone flags, clone3, setns. */
const F11 = [
  'import ctypes, errno, os, platform, socket',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'nr = {"x86_64": 56, "aarch64": 220}[platform.machine()]',
  'L = ctypes.c_long',
  'def show(name, r):',
  '    print(name, "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?"))',
  // clone first: once unshare made a user namespace, a nested one needs a uid map (EPERM anyway)
  'r = libc.syscall(L(nr), L(0x10000000 | 17), L(0), L(0), L(0), L(0))',
  'if r == 0: os._exit(0)',
  'if r > 0: os.waitpid(r, 0)',
  'show("clone", r)',
  'show("clone3", libc.syscall(L(435), None, L(0)))',
  'show("setns", libc.setns(-1, 0x40000000))',
  'show("unshare", libc.unshare(0x10000000 | 0x40000000))',
  'class H(ctypes.Structure): _fields_ = [("v", ctypes.c_uint32), ("pid", ctypes.c_int)]',
  'class D(ctypes.Structure): _fields_ = [("e", ctypes.c_uint32), ("p", ctypes.c_uint32), ("i", ctypes.c_uint32)]',
  'h = H(0x20080522, 0); d = (D * 2)(); libc.capget(ctypes.byref(h), d)',
  'print("CapEff %08x%08x" % (d[1].e, d[0].e))',
  'try:',
  '    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12); print("netlink_netfilter ok")',
  'except OSError as e: print("netlink_netfilter", errno.errorcode[e.errno])',
].join('\n')

const F11_HELD =
  'clone EPERM\nclone3 ENOSYS\nsetns EPERM\nunshare EPERM\nCapEff 0000000000000000\nnetlink_netfilter EPERM\n'

/** The families the allowlist refuses on purpose, each asked the cheapest harmless way. */
const REFUSED = [
  'import ctypes, errno, platform',
  'libc = ctypes.CDLL(None, use_errno=True)',
  'N = {"x86_64": dict(bpf=321, keyctl=250, ptrace=101, perf=298, uffd=323, personality=135),',
  '     "aarch64": dict(bpf=280, keyctl=219, ptrace=117, perf=241, uffd=282, personality=92)}[platform.machine()]',
  'L = ctypes.c_long',
  'def show(name, r):',
  '    print(name, "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?"))',
  'show("bpf", libc.syscall(L(N["bpf"]), L(0), None, L(0)))',
  'show("keyctl", libc.syscall(L(N["keyctl"]), L(0), L(-3), L(0)))',
  'show("ptrace_traceme", libc.syscall(L(N["ptrace"]), L(0), L(0), L(0), L(0)))',
  'show("perf_event_open", libc.syscall(L(N["perf"]), None, L(0), L(-1), L(-1), L(0)))',
  'show("userfaultfd", libc.syscall(L(N["uffd"]), L(1)))',
  'show("personality", libc.syscall(L(N["personality"]), L(0x0400000)))',
  'show("tiocsti", libc.ioctl(0, L(0x5412), ctypes.c_char_p(b"x")))',
  'show("io_uring_setup", libc.syscall(L(425), L(1), None))',
  'show("mq_open", libc.mq_open(b"/tv-filter-test-none", 0))',
].join('\n')

const REFUSED_HELD = (mechanism: Mechanism) =>
  [
    'bpf EPERM',
    'keyctl EPERM',
    'ptrace_traceme EPERM',
    'perf_event_open EPERM',
    'userfaultfd EPERM',
    'personality EPERM',
    'tiocsti EPERM',
    'io_uring_setup ENOSYS',
    // POSIX queues live in the IPC namespace: bwrap's own (the name is simply not there), the host's under Landlock.
    mechanism === 'bwrap' ? 'mq_open ENOENT' : 'mq_open EPERM',
    '',
  ].join('\n')

/** Where the tool tries to send: a path it can see (bwrap: the shared /tmp; Landlock: anywhere) and an abstract name. */
function targets(mechanism: Mechanism): { dir: string; paths: string[] } {
  const place = mechanism === 'bwrap' ? join('/tmp', `tv-f3-${randomUUID()}`) : dir('tv-f3-')
  mkdirSync(place, { recursive: true, mode: 0o755 })
  return { dir: place, paths: [join(place, 'dg.sock'), `@tv-f3-${randomUUID()}`] }
}

/** The tools of the report: `bwshared` (bwrap, net none, tmp left shared) and `ll` (Landlock). */
const declarations: Record<Mechanism, Record<string, unknown>> = {
  bwrap: { fs: { read: ['.'] }, net: 'none' },
  landlock: { fs: { read: ['.'], write: ['./out'] } },
}

function f3Expected(paths: readonly string[]): string {
  return `${paths.map((t) => `${t} socketpair EPERM\n`).join('')}SOCK_STREAM pair x\nSOCK_SEQPACKET pair x\n`
}

const sinks: UnixDatagramSink[] = []
const places: string[] = []
afterEach(async () => {
  for (const sink of sinks.splice(0)) await sink.close()
  for (const place of places.splice(0)) rmSync(place, { recursive: true, force: true })
})

async function sinkFor(mechanism: Mechanism): Promise<UnixDatagramSink> {
  const { dir: place, paths } = targets(mechanism)
  places.push(place)
  const sink = await unixDatagramSink(paths)
  sinks.push(sink)
  return sink
}

/** A toolbox with one probe tool declaring the mechanism's declaration (plus `out` for Landlock's write grant). */
function probeBox(mechanism: Mechanism): { box: string; tool: string } {
  const box = dir('tv-filter-box-')
  mkdirSync(join(box, 'out'))
  chmodSync(join(box, 'out'), 0o777) // the sandbox user, or the ordinary user, writes it
  const tool = sandboxedTool(box, 'probe', { sandbox: declarations[mechanism] })
  return { box, tool }
}

/** Composes over the box, calls the probe, disposes, and checks that no process of the run is left. */
async function callAsRoot(mechanism: Mechanism, box: string, script: string): Promise<string> {
  const composed = await load(box, { sandbox: mechanism })
  const runId = (composed.kernel.get(RuntimeToken) as Runtime).runId
  expect(composed.tools.loadErrors()).toEqual([])
  const result = await composed.call('probe', script)
  await composed.kernel.dispose()
  expect(await eventually(() => markedProcesses(runId).length === 0), 'processes left').toBe(true)
  expect(result.isError, result.text).toBe(false)
  return result.text
}

describe.skipIf(!hasBwrap || !isRoot)('the syscall filter as the attacker tried it (root)', () => {
  for (const mechanism of mechanisms) {
    describe(mechanism, () => {
      it('F3: socketpair(AF_UNIX, SOCK_DGRAM) + sendto/connect reaches no host datagram socket, by path or abstract name', async () => {
        const sink = await sinkFor(mechanism)
        const { box } = probeBox(mechanism)
        const text = await callAsRoot(mechanism, box, sh(F3, sink.targets))
        expect({ text, received: await sink.drain() }).toEqual({
          text: f3Expected(sink.targets),
          received: [],
        })
      })

      it('F11: no user, network or other namespace: unshare, clone flags and setns EPERM, clone3 ENOSYS', async () => {
        const { box } = probeBox(mechanism)
        expect(await callAsRoot(mechanism, box, sh(F11))).toBe(F11_HELD)
      })

      it('the families refused on purpose answer EPERM (io_uring ENOSYS)', async () => {
        const { box } = probeBox(mechanism)
        expect(await callAsRoot(mechanism, box, sh(REFUSED))).toBe(REFUSED_HELD(mechanism))
      })
    })
  }
})

/** `toolvisor call TOOL {"script": SCRIPT} --sandbox M --state-dir D` as the ordinary user. */
async function callAsUser(mechanism: Mechanism, tool: string, script: string): Promise<string> {
  const user = ordinaryUser()
  const state = userDir('.tv-filter-state-', user)
  places.push(state)
  const tag = randomUUID()
  const child = asUser(
    process.execPath,
    [seenAs(bin), 'call', tool, JSON.stringify({ script }), '--sandbox', mechanism, '--state-dir', state],
    { env: { TV_TEST_TAG: tag } },
  )
  const { code, stdout, stderr } = await output(child)
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
  expect(await eventually(() => processesWith('TV_TEST_TAG', tag).length === 0), 'processes left').toBe(true)
  return stdout
}

function output(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

describe.skipIf(asUserSkip !== undefined || !hasBwrap)(
  'the syscall filter as the attacker tried it (an ordinary user)',
  () => {
    for (const mechanism of mechanisms) {
      describe(mechanism, () => {
        it('F3: toolvisor run as the user: the datagram pair reaches no socket of root, by path or abstract name', async () => {
          const sink = await sinkFor(mechanism)
          const { tool } = probeBox(mechanism)
          const text = await callAsUser(mechanism, tool, sh(F3, sink.targets))
          expect({ text, received: await sink.drain() }).toEqual({
            text: f3Expected(sink.targets),
            received: [],
          })
        })

        it('F11: toolvisor run as the user: no namespace from inside the sandbox', async () => {
          const { tool } = probeBox(mechanism)
          expect(await callAsUser(mechanism, tool, sh(F11))).toBe(F11_HELD)
        })
      })
    }
  },
)

/** The programs a tool or a model's command runs every day, each in a write grant of its own. */
const PROGRAMS: Record<
  string,
  { readonly script: (work: string, port: number) => string; readonly out: string }
> = {
  'bash: pipes, a subshell, a command substitution, cat /dev/stdin': {
    script: () =>
      'printf "b\\na\\n" | sort | tr a-z A-Z; (exit 3); echo "subshell $?"; x=$(echo inner); echo "$x"; echo via-stdin | cat /dev/stdin',
    out: 'A\nB\nsubshell 3\ninner\nvia-stdin\n',
  },
  'python3: threads, subprocess, a TCP socket to a host listener (net: host)': {
    script: (_work, port) =>
      sh(
        [
          'import socket, subprocess, threading',
          'got = []',
          'ts = [threading.Thread(target=lambda i=i: got.append(i * i)) for i in range(4)]',
          '[t.start() for t in ts]; [t.join() for t in ts]',
          'print("threads", sorted(got))',
          'print("subprocess", subprocess.run(["/bin/echo", "child"], capture_output=True, text=True).stdout.strip())',
          `s = socket.create_connection(("127.0.0.1", ${port}), 5); s.sendall(b"ping"); print("tcp", s.recv(4).decode())`,
        ].join('\n'),
      ),
    out: 'threads [0, 1, 4, 9]\nsubprocess child\ntcp pong\n',
  },
  'node: a worker thread and child_process': {
    script: (work) => `/usr/bin/node ${work}/probe.cjs 2>&1`,
    out: 'worker 42\nchild hi\n',
  },
  'perl: fork, wait, map': {
    script: () =>
      `/usr/bin/perl -e 'my $p = fork(); exit 7 if $p == 0; waitpid($p, 0); print "perl ", $? >> 8, " ", join(",", map { $_ * 2 } 1..3), "\\n"'`,
    out: 'perl 7 2,4,6\n',
  },
  'git: init, add, commit and log in the write grant': {
    script: (work) =>
      `export HOME=${work}; cd ${work} && git init -q r && cd r && echo a > f && git add f && git -c user.name=t -c user.email=t@example.com commit -qm one && git log --format=%s 2>&1`,
    out: 'one\n',
  },
  'cc: compile a C file and run it': {
    script: (work) =>
      `cd ${work} && printf '#include <stdio.h>\\nint main(void) { puts("compiled"); return 0; }\\n' > h.c && cc -o h h.c 2>&1 && ./h`,
    out: 'compiled\n',
  },
  'tar: create, list and extract': {
    script: (work) =>
      `cd ${work} && mkdir d && echo t > d/f && tar -cf a.tar d && rm -r d && tar -xf a.tar && cat d/f && tar -tf a.tar`,
    out: 't\nd/\nd/f\n',
  },
  'sort: a million lines through temporary files and two threads': {
    script: (work) => `seq 1 1000000 | sort -rn -S 2M -T ${work} --parallel=2 | head -1`,
    out: '1000000\n',
  },
}

const NODE_PROBE = `const { Worker } = require('node:worker_threads')
const { execFileSync } = require('node:child_process')
const w = new Worker('require("node:worker_threads").parentPort.postMessage(6 * 7)', { eval: true })
w.on('message', (m) => {
  console.log('worker', m)
  console.log('child', execFileSync('/bin/echo', ['hi']).toString().trim())
  w.terminate()
})
`

describe.skipIf(!hasBwrap || !isRoot)('real programs still run under the filter (root)', () => {
  for (const mechanism of mechanisms) {
    describe(mechanism, () => {
      for (const [name, program] of Object.entries(PROGRAMS)) {
        it(name, async () => {
          const box = dir('tv-filter-programs-')
          const work = dir('tv-filter-work-', 0o777) // the sandbox user writes it
          writeFileSync(join(work, 'probe.cjs'), NODE_PROBE)
          // git reads /dev/urandom: both mechanisms' exec minimum has it (bwrap's own /dev, a
          // Landlock rule of its own)
          const read = ['/proc']
          sandboxedTool(box, 'probe', { sandbox: { fs: { read, write: [work] }, net: 'host' } })
          const server = createServer((socket) => socket.once('data', () => socket.end('pong')))
          await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
          try {
            const port = (server.address() as { port: number }).port
            expect(await callAsRoot(mechanism, box, program.script(work, port))).toBe(program.out)
          } finally {
            server.close()
          }
        })
      }
    })
  }
})
