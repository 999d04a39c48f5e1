/**
 * The ways out of the sandbox an attacker's review found (issue 9), each tried the way the attacker
 * tried it: a tool that wants out, loaded and called through the CLI's composition root (and the
 * `toolvisor` binary where what matters is what the process inherits), as root. Probes are
 * harmless: `access(W_OK)`, markers in test directories, processes, keys and segments the test
 * owns. Each test fails on the code before its fix.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bin } from './helpers.js'
import { dir, hasBwrap, isRoot, load, mechanisms, sandboxedTool } from './sandbox-helpers.js'

const hasCc = spawnSync('cc', ['--version']).status === 0
const x86 = process.arch === 'x64'
const py = (code: string) => `/usr/bin/python3 -c '${code.replaceAll("'", "'\\''")}' 2>&1`

/** Processes a test started, killed after it. */
const owned: number[] = []
afterEach(() => {
  for (const pid of owned.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

describe.skipIf(!hasBwrap || !isRoot)('ways out of the sandbox (root, bwrap and landlock)', () => {
  for (const mechanism of mechanisms) {
    describe(mechanism, () => {
      it('1. a sandboxed tool never runs as host uid 0, and /proc/sys, /proc/sysrq-trigger, /sys are not writable', async () => {
        const box = dir('tv-esc-box-')
        sandboxedTool(box, 'rooty', { sandbox: { fs: { read: ['/proc'] } } })
        const { call } = await load(box, { sandbox: mechanism })
        const paths = [
          '/proc/sys/kernel/core_pattern',
          '/proc/sys/vm/drop_caches',
          '/proc/sysrq-trigger',
          '/sys/kernel/uevent_helper',
        ]
        const result = await call(
          'rooty',
          `id -u; for p in ${paths.join(' ')}; do [ -w "$p" ] && echo "writable $p"; done; echo end`,
        )
        const [uid, ...rest] = result.text.trim().split('\n')
        expect(uid).not.toBe('0')
        expect(rest).toEqual(['end'])
      })

      it('1. a write grant the sandbox user cannot write is refused at load, with the fix', async () => {
        const box = dir('tv-esc-box-')
        const rootOnly = dir('tv-esc-rootonly-') // 0755 root: nobody may not write it
        sandboxedTool(box, 'writer', { sandbox: { fs: { write: [rootOnly] } } })
        const { tools } = await load(box, { sandbox: mechanism })
        expect(tools.list().map((t) => t.name)).toEqual(['processes'])
        const [report] = tools.loadErrors()
        expect(report?.field).toBe('$.runtime.sandbox.fs.write[0]')
        expect(report?.message).toContain(`${rootOnly} is not writable by the sandbox user "nobody"`)
        expect(report?.message).toMatch(/chown|group|run_as/)
      })

      it.skipIf(!hasCc)(
        '2. LD_PRELOAD in the declared environment never reaches a privileged helper',
        async () => {
          const box = dir('tv-esc-box-')
          const lib = dir('tv-esc-lib-')
          const marks = dir('tv-esc-marks-', 0o1777)
          const so = preloadLibrary(lib, join(marks, 'loaded'))
          sandboxedTool(box, 'preload', {
            environment: { LD_PRELOAD: so, TV_PLAIN: 'reached' },
            sandbox: { fs: { read: [] } },
          })
          const { call } = await load(box, { sandbox: mechanism })
          const result = await call('preload', 'echo "$TV_PLAIN"')
          expect(result.text).toBe('reached\n')
          expect(loadedBy(join(marks, 'loaded')).filter(privileged)).toEqual([])
        },
      )

      it('4. no unix socket outside the grants: /tmp (tmp left at its default), a granted directory, abstract', async () => {
        const box = dir('tv-esc-box-')
        const granted = dir('tv-esc-granted-')
        const name = randomUUID()
        const servers = await Promise.all([
          listen(`/tmp/tv-esc-${name}.sock`),
          listen(join(granted, 'inside.sock')),
          listen(`\0tv-esc-${name}`),
        ])
        try {
          sandboxedTool(box, 'dialer', { sandbox: { fs: { write: [granted] } } })
          chmodSync(granted, 0o777)
          const { call } = await load(box, { sandbox: mechanism })
          const code = [
            'import socket',
            `for p in ["/tmp/tv-esc-${name}.sock", "${granted}/inside.sock", "\\0tv-esc-${name}"]:`,
            '  s = None',
            '  try:',
            '    s = socket.socket(socket.AF_UNIX); s.connect(p); print("connected", repr(p))',
            '  except OSError as e: print("refused", e.errno)',
          ].join('\n')
          const result = await call('dialer', py(code))
          expect(result.text).not.toContain('connected')
          expect(result.text.trim().split('\n')).toHaveLength(3)
          expect(servers.map((s) => s.accepted)).toEqual([0, 0, 0])
        } finally {
          for (const server of servers) server.server.close()
        }
      })

      it('5. a descriptor inherited from the parent of toolvisor does not reach the tool', async () => {
        const box = dir('tv-esc-box-')
        const secretDir = dir('tv-esc-fd-')
        const tool = sandboxedTool(box, 'fds', { sandbox: { fs: { read: [] } } })
        const fd = openSync(secretDir, 'r')
        try {
          const code =
            'import os\nfor fd in range(3, 1024):\n  try: os.fstat(fd); print(fd)\n  except OSError: pass\nprint("end")'
          const cli = callWithFd(tool, py(code), ['--sandbox', mechanism], fd)
          expect(cli.stderr).toBe('')
          expect(cli.stdout).toBe('end\n')
        } finally {
          closeSync(fd)
        }
      })

      it.skipIf(!x86)(
        "6. root's keyring and a root-only SysV shared memory segment are out of reach",
        async () => {
          const box = dir('tv-esc-box-')
          sandboxedTool(box, 'ipc', { sandbox: { fs: { read: [] } } })
          const { call } = await load(box, { sandbox: mechanism })
          const secret = `tv-${randomUUID()}`
          const [key, shm] = rootKeyAndSegment(secret)
          try {
            const code = [
              'import ctypes',
              'libc = ctypes.CDLL(None, use_errno=True)',
              'buf = ctypes.create_string_buffer(256)',
              `n = libc.syscall(250, 11, ${key}, buf, 256)`, // keyctl(KEYCTL_READ)
              'print("key", buf.raw[:n].decode() if n > 0 else "refused")',
              'libc.shmat.restype = ctypes.c_void_p',
              `p = libc.shmat(${shm}, None, 0)`,
              'print("shm", "refused" if p in (None, 2**64 - 1) else "attached")',
            ].join('\n')
            const result = await call('ipc', py(code))
            expect(result.text).toBe('key refused\nshm refused\n')
          } finally {
            dropKeyAndSegment(key, shm)
          }
        },
      )

      it('7. a grant swapped for a symlink between two calls is refused, naming the field', async () => {
        const box = dir('tv-esc-box-')
        const parent = dir('tv-esc-parent-', 0o777)
        const victim = dir('tv-esc-victim-', 0o777)
        const state = join(parent, 'state')
        mkdirSync(state, { mode: 0o777 })
        chmodSync(state, 0o777)
        sandboxedTool(box, 'swapper', { sandbox: { fs: { write: [state] } } })
        const { call } = await load(box, { sandbox: mechanism })
        expect(await call('swapper', `echo one > ${state}/first && echo ok`)).toEqual({
          isError: false,
          text: 'ok\n',
        })
        renameSync(state, join(parent, 'moved'))
        symlinkSync(victim, state)
        const second = await call('swapper', `echo two > ${state}/planted && echo ok`)
        expect(second.isError).toBe(true)
        expect(second.text).toContain('$.runtime.sandbox.fs.write[0]')
        expect(existsSync(join(victim, 'planted'))).toBe(false)
      })

      it('8. chmod and chown of a root-owned file outside the grants fail', async () => {
        const box = dir('tv-esc-box-')
        const place = dir('tv-esc-meta-')
        const file = join(place, 'root-owned')
        writeFileSync(file, 'x')
        chmodSync(file, 0o600)
        sandboxedTool(box, 'meta', { sandbox: { fs: { read: ['/proc'] } } })
        const { call } = await load(box, { sandbox: mechanism })
        const result = await call(
          'meta',
          `chmod 666 ${file} 2>/dev/null; chown 1:1 ${file} 2>/dev/null; echo done`,
        )
        expect(result.text).toBe('done\n')
        expect(statSync(file).mode & 0o777).toBe(0o600)
        expect(statSync(file).uid).toBe(0)
      })

      it('9. describe runs confined: it cannot read root-only files, write, or reach the network', async () => {
        const box = dir('tv-esc-box-')
        const secret = dir('tv-esc-secret-', 0o700)
        writeFileSync(join(secret, 'key'), 'hunter2\n')
        const listener = await listenTcp()
        try {
          const connect = `import socket; socket.create_connection(("127.0.0.1", ${listener.port}), 2)`
          const describeScript = [
            `if cat ${secret}/key >/dev/null 2>&1; then r=read; else r=denied; fi`,
            `if touch ${box}/planted 2>/dev/null; then w=wrote; else w=denied; fi`,
            `if /usr/bin/python3 -c '${connect}' >/dev/null 2>&1; then n=connected; else n=denied; fi`,
            'printf "%s\\n" "$DOC" | sed "s/__OUTCOME__/$r $w $n/"',
          ].join('; ')
          sandboxedTool(box, 'nosy', { environment: { OUTCOME: '__OUTCOME__' } }, undefined, describeScript)
          const { tools } = await load(box, { sandbox: mechanism })
          expect(tools.loadErrors()).toEqual([])
          expect(tools.get('nosy')?.description).toContain('"OUTCOME":"denied denied denied"')
          expect(existsSync(join(box, 'planted'))).toBe(false)
          expect(listener.accepted).toBe(0)
        } finally {
          listener.server.close()
        }
      })
    })
  }

  describe('landlock only', () => {
    it('3. LL_MAX_ABI in the declared environment does not lower the ABI the launcher applies', async () => {
      const box = dir('tv-esc-box-')
      // A process of the tool's own user outside the sandbox: only Landlock's signal scoping
      // (ABI 6) stops the tool from signalling it.
      const outside = spawn(
        'setpriv',
        ['--reuid', 'nobody', '--regid', 'nogroup', '--clear-groups', 'sleep', '60'],
        {
          stdio: 'ignore',
        },
      )
      owned.push(outside.pid!)
      sandboxedTool(box, 'lowered', {
        run_as: { user: 'nobody' },
        environment: { LL_MAX_ABI: '5' },
        sandbox: { fs: { read: [] } },
      })
      const { call } = await load(box, { sandbox: 'landlock', runAs: 'setpriv', runAsAllow: ['nobody'] })
      const result = await call(
        'lowered',
        `kill -0 ${outside.pid} 2>/dev/null && echo signalled || echo refused`,
      )
      expect(result.text).toBe('refused\n')
    })
  })

  describe('no sandbox', () => {
    it('5. a descriptor inherited from the parent of toolvisor does not reach an unsandboxed tool either', async () => {
      const box = dir('tv-esc-box-')
      const secretDir = dir('tv-esc-fd-')
      const tool = sandboxedTool(box, 'fds', {})
      const fd = openSync(secretDir, 'r')
      try {
        const cli = callWithFd(tool, 'ls /proc/self/fd', [], fd)
        expect(
          cli.stdout
            .trim()
            .split('\n')
            .map(Number)
            .sort((a, b) => a - b),
        ).toEqual([0, 1, 2, 3])
      } finally {
        closeSync(fd)
      }
    })

    it.skipIf(!hasCc)(
      '2. LD_PRELOAD in the environment of a run_as tool never reaches setpriv or runuser',
      async () => {
        const box = dir('tv-esc-box-')
        const lib = dir('tv-esc-lib-')
        const marks = dir('tv-esc-marks-', 0o1777)
        const so = preloadLibrary(lib, join(marks, 'loaded'))
        sandboxedTool(box, 'preload', { run_as: { user: 'nobody' }, environment: { LD_PRELOAD: so } })
        for (const runAs of ['setpriv', 'runuser']) {
          const { call } = await load(box, { runAs, runAsAllow: ['nobody'] })
          expect(await call('preload', 'id -un')).toEqual({ isError: false, text: 'nobody\n' })
        }
        const loads = loadedBy(join(marks, 'loaded'))
        expect(loads.filter(privileged)).toEqual([])
        expect(loads.filter((line) => line.startsWith('0 '))).toEqual([])
      },
    )

    it('run_as nobody without a group runs with its primary group (nogroup)', async () => {
      const box = dir('tv-esc-box-')
      sandboxedTool(box, 'who', { run_as: { user: 'nobody' } })
      for (const runAs of ['setpriv', 'runuser']) {
        const { call } = await load(box, { runAs, runAsAllow: ['nobody'] })
        expect(await call('who', 'id -un; id -gn')).toEqual({ isError: false, text: 'nobody\nnogroup\n' })
      }
    })
  })
})

/** Builds a preload library whose constructor appends `<uid> <exe>` of every process that loads it to `marker`. */
function preloadLibrary(dirPath: string, marker: string): string {
  const source = join(dirPath, 'mark.c')
  const so = join(dirPath, 'mark.so')
  writeFileSync(
    source,
    `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  char exe[512], line[700];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n < 0 ? 0 : n] = 0;
  int fd = open("${marker}", O_WRONLY | O_APPEND | O_CREAT, 0666);
  if (fd < 0) return;
  int len = snprintf(line, sizeof line, "%d %s\\n", (int)getuid(), exe);
  if (write(fd, line, len) < 0) {}
  close(fd);
}
`,
  )
  execFileSync('cc', ['-shared', '-fPIC', '-o', so, source])
  chmodSync(so, 0o755)
  return so
}

function loadedBy(marker: string): string[] {
  return existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').filter(Boolean) : []
}

/** A line of the preload marker written by a privileged helper rather than by the tool. */
function privileged(line: string): boolean {
  return /\/(bwrap|setpriv|runuser|su|landlock-launcher)$/.test(line)
}

/** `toolvisor call TOOL {"script": SCRIPT}` with `fd` inherited as descriptor 50. */
function callWithFd(tool: string, script: string, flags: string[], fd: number) {
  const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe']
  while (stdio.length < 50) stdio.push('ignore')
  stdio.push(fd)
  return spawnSync(
    process.execPath,
    [bin, 'call', tool, JSON.stringify({ script }), ...flags, '--state-dir', dir('tv-esc-state-')],
    { encoding: 'utf8', stdio },
  )
}

interface Listener {
  readonly server: Server
  accepted: number
}

/** A unix socket listener anyone may connect to (mode 0777), counting connections. */
async function listen(path: string): Promise<Listener> {
  const listener: Listener = { server: createServer(), accepted: 0 }
  listener.server.on('connection', (socket) => {
    listener.accepted++
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.server.listen(path, resolve))
  if (!path.startsWith('\0')) chmodSync(path, 0o777)
  return listener
}

async function listenTcp(): Promise<Listener & { port: number }> {
  const listener: Listener = { server: createServer(), accepted: 0 }
  listener.server.on('connection', (socket) => {
    listener.accepted++
    socket.destroy()
  })
  await new Promise<void>((resolve) => listener.server.listen(0, '127.0.0.1', resolve))
  return Object.assign(listener, { port: (listener.server.address() as { port: number }).port })
}

/** As root: a key holding `secret` in root's user keyring, and a 0600 shared memory segment. */
function rootKeyAndSegment(secret: string): [number, number] {
  const out = execFileSync(
    '/usr/bin/python3',
    [
      '-c',
      [
        'import ctypes',
        'libc = ctypes.CDLL(None, use_errno=True)',
        `k = libc.syscall(248, b"user", b"tv-escape-test", b"${secret}", ${secret.length}, -4)`, // add_key(@u)
        's = libc.shmget(0, 4096, 0o1000 | 0o600)', // IPC_PRIVATE, IPC_CREAT | 0600
        'print(k, s)',
      ].join('\n'),
    ],
    { encoding: 'utf8' },
  )
  const [key, shm] = out.trim().split(' ').map(Number) as [number, number]
  if (!(key > 0) || !(shm >= 0)) throw new Error(`could not create the key and segment: ${out}`)
  return [key, shm]
}

function dropKeyAndSegment(key: number, shm: number): void {
  execFileSync('/usr/bin/python3', [
    '-c',
    `import ctypes\nlibc = ctypes.CDLL(None)\nlibc.syscall(250, 21, ${key})\nlibc.shmctl(${shm}, 0, None)`,
  ]) // KEYCTL_INVALIDATE, IPC_RMID
}
