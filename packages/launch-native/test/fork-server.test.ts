import { spawn } from 'node:child_process'
import { readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Child, Launch } from '@toolvisor/process-runtime'
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { builtForkServer, nativeSpawner } from '../src/native-spawner.js'
import { server } from './fork-servers.js'
import { makeRuntime, tempDir, tool } from './helpers.js'

function sh(script: string, extra: Partial<Launch> = {}): Launch {
  return {
    file: '/bin/sh',
    args: ['-c', script],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    extraFds: [],
    ...extra,
  }
}

/** Everything the child wrote on stdout, and how it ended. */
function finished(
  child: Child,
): Promise<{ stdout: string; code: number | null; signal: string | null; why: string | undefined }> {
  let stdout = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  const ended = new Promise<[number | null, NodeJS.Signals | null, string | undefined]>((resolve) =>
    child.once('exit', (code, signal, why) => resolve([code, signal, why])),
  )
  const closed = new Promise<void>((resolve) => child.stdout!.once('close', () => resolve()))
  return Promise.all([ended, closed]).then(([[code, signal, why]]) => ({ stdout, code, signal, why }))
}

/** Not running: no such process, or a zombie (until init reaps what lost its parent). */
const gone = (pid: number) => {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return true
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('the fork server', () => {
  it('forks a launch from itself: its pid, its output, its exit code, stdin written and closed', async () => {
    const forks = server()
    const { child } = await forks.launch(sh('echo "parent=$PPID"; cat; exit 3'))
    expect(child.pid).toBeGreaterThan(0)
    child.stdin!.end('from stdin\n')
    const result = await finished(child)
    expect(result).toEqual({ stdout: `parent=${forks.pid}\nfrom stdin\n`, code: 3, signal: null })
  })

  it('tells a death by signal by its name', async () => {
    const { child } = await server().launch(sh('kill -TERM $$'))
    expect(await finished(child)).toMatchObject({ code: null, signal: 'SIGTERM' })
  })

  it('gives the child exactly its launch: descriptors 0-2 and its extras, its own session, default signals, no mask, only its environment', async () => {
    const script = [
      'ls /proc/self/fd | sort -n | tr "\\n" " "; echo',
      'ps -o sid= -p $$ | tr -d " "; echo $$',
      'grep -E "^Sig(Blk|Ign)" /proc/self/status',
      'env | sort',
      'cat <&3',
    ].join('; ')
    const { child, pipes } = await server().launch(
      sh(script, {
        env: { PATH: '/usr/bin:/bin', ONLY: 'this' },
        extraFds: [{ kind: 'data', data: Buffer.from('extra\n') }],
      }),
    )
    expect(pipes).toEqual([undefined])
    const { stdout, code } = await finished(child)
    const [fds, sid, pid, blocked, ignored, ...rest] = stdout.trim().split('\n')
    expect(code).toBe(0)
    // `ls` lists its own directory descriptor too: 0, 1, 2, 3 (the extra), and that one.
    // (whatever this test's own parent left open, Node's spawn passes on: the fork server does not)
    expect(fds!.trim().split(' ').map(Number).slice(0, 4)).toEqual([0, 1, 2, 3])
    expect(fds!.trim().split(' ')).toHaveLength(5)
    expect(sid).toBe(pid)
    expect(blocked).toMatch(/^SigBlk:\s+0+$/)
    expect(ignored).toMatch(/^SigIgn:\s+0+$/)
    expect(rest.filter((line) => line !== 'PWD=/' && line !== 'SHLVL=1' && !line.startsWith('_='))).toEqual([
      'ONLY=this',
      'PATH=/usr/bin:/bin',
      'extra',
    ])
  })

  it('refuses what cannot start, saying what: a missing file, a missing working directory, a NUL in an argument', async () => {
    const forks = server()
    await expect(forks.launch(sh('true', { file: '/nonexistent/tool' }))).rejects.toMatchObject({
      code: 'ENOENT',
      message: 'spawn /nonexistent/tool ENOENT',
    })
    await expect(forks.launch(sh('true', { cwd: '/nonexistent' }))).rejects.toThrow(
      'spawn /bin/sh ENOENT (working directory /nonexistent)',
    )
    await expect(forks.launch(sh('true', { args: ['-c', 'true\0rm -rf /'] }))).rejects.toThrow(
      /contains a NUL byte/,
    )
    // Still serving.
    expect(await finished((await forks.launch(sh('echo ok'))).child)).toMatchObject({
      stdout: 'ok\n',
      code: 0,
    })
  })

  it('opens a pinned grant itself and refuses one replaced by a symlink since, naming its field', async () => {
    const dir = tempDir()
    const granted = join(dir, 'granted')
    const other = join(dir, 'other')
    writeFileSync(granted, 'mine\n')
    writeFileSync(other, 'theirs\n')
    const { statSync } = await import('node:fs')
    const stat = statSync(granted, { bigint: true })
    const pin = { identity: `${stat.dev}:${stat.ino}`, field: '$.runtime.sandbox.fs.read[0]' }
    const forks = server()
    // An O_PATH descriptor: read by opening it again through /proc (what bwrap and Landlock need is
    // the reference itself).
    const read = await forks.launch(
      sh('cat /proc/self/fd/3', { extraFds: [{ kind: 'file', path: granted, pin }] }),
    )
    expect((await finished(read.child)).stdout).toBe('mine\n')
    const { rmSync } = await import('node:fs')
    rmSync(granted)
    symlinkSync(other, granted)
    await expect(
      forks.launch(sh('cat /proc/self/fd/3', { extraFds: [{ kind: 'file', path: granted, pin }] })),
    ).rejects.toMatchObject({
      code: 'RUNTIME_ERR_GRANT_CHANGED',
      message: expect.stringContaining(
        `$.runtime.sandbox.fs.read[0]: ${granted} is no longer what was qualified at load (it now leads to ${other} (a symlink))`,
      ),
    })
    expect(readFileSync(other, 'utf8')).toBe('theirs\n')
  })

  it('a child cannot reach the server: its channel is not inherited and cannot be opened through /proc', async () => {
    const forks = server()
    const channel = readlinkSync(`/proc/${forks.pid}/fd/3`)
    expect(channel).toMatch(/^socket:/)
    const { child } = await forks.launch(
      sh(
        'for fd in /proc/$PPID/fd/*; do if true 9<>"$fd" 2>/dev/null; then echo "opened $fd $(readlink "$fd")"; fi; done; echo end',
      ),
    )
    const { stdout } = await finished(child)
    // Only its /dev/null standard descriptors open; never the socket to the runtime.
    expect(stdout.split('\n').filter((line) => line.includes('socket:'))).toEqual([])
    expect(stdout).toContain('end')
  })

  it('when killed from outside, kills what it forked and says so; the next launch gets a new server', async () => {
    const forks = server()
    const { child } = await forks.launch(sh('sleep 60'))
    const ended = finished(child)
    process.kill(forks.pid!, 'SIGKILL')
    expect(await ended).toMatchObject({
      code: null,
      signal: 'SIGKILL',
      why: 'killed by toolvisor: the fork server ended (SIGKILL), and what it forked cannot be followed',
    })
    // Gone (a zombie a moment, until init reaps what lost its parent).
    expect(await eventually(() => gone(child.pid!))).toBe(true)
    await expect(forks.launch(sh('true'))).rejects.toThrow('the fork server ended')
    const next = server()
    expect(await finished((await next.launch(sh('echo again'))).child)).toMatchObject({ stdout: 'again\n' })
  })

  it('when killed with launches under way, settles every one of them (failed, or run and killed): none hangs', async () => {
    const forks = server()
    const launches = Array.from({ length: 20 }, () =>
      forks.launch(sh('sleep 60')).then(
        async ({ child }) => ({ pid: child.pid!, ...(await finished(child)) }),
        (error: Error) => ({ error: error.message }),
      ),
    )
    process.kill(forks.pid!, 'SIGKILL')
    const settled = await Promise.all(launches)
    for (const outcome of settled) {
      if ('error' in outcome) expect(outcome.error).toMatch(/^the fork server (ended|cannot be reached)/)
      else expect(outcome).toMatchObject({ code: null, signal: 'SIGKILL' })
    }
    const pids = settled.flatMap((outcome) => ('pid' in outcome ? [outcome.pid] : []))
    expect(await eventually(() => pids.every(gone))).toBe(true)
  })

  it('ignores the terminal signals and ends with the process that runs it, however that ends', async () => {
    const host = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { ForkServer } from ${JSON.stringify(new URL('../dist/fork-server.js', import.meta.url).href)}
         const forks = new ForkServer(${JSON.stringify(builtForkServer)})
         const { child } = await forks.launch({ file: '/bin/sleep', args: ['60'], env: {}, cwd: '/', extraFds: [] })
         process.stdout.write(forks.pid + ' ' + child.pid + '\\n')
         setInterval(() => {}, 1000)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const line = await new Promise<string>((resolve) => host.stdout!.once('data', (d) => resolve(String(d))))
    const [serverPid, sleeperPid] = line.trim().split(' ').map(Number)
    try {
      // Ignored, not merely survived: its signal mask says so (HUP 1, INT 2, QUIT 3, TERM 15).
      const ignored = BigInt(
        `0x${/^SigIgn:\s+(\w+)$/m.exec(readFileSync(`/proc/${serverPid}/status`, 'utf8'))![1]}`,
      )
      for (const signal of [1, 2, 3, 15]) expect((ignored >> BigInt(signal - 1)) & 1n).toBe(1n)
      host.kill('SIGKILL')
      expect(await eventually(() => !alive(serverPid!))).toBe(true)
      // And its children with it (PR_SET_PDEATHSIG), even one the runtime would not know of.
      expect(await eventually(() => !alive(sleeperPid!))).toBe(true)
    } finally {
      if (alive(sleeperPid!)) process.kill(sleeperPid!, 'SIGKILL')
    }
  })
})

describe('launches of a runtime', () => {
  const parentOf = async (options: Parameters<typeof makeRuntime>[0]) => {
    const runtime = makeRuntime(options)
    const proc = runtime.start({ tool: tool('/bin/sh'), argv: ['-c', 'echo $PPID'] })
    await proc.exit
    return {
      parent: Number(proc.output.stdout().head.toString().trim()),
      facts: runtime.launchFacts().forkServer,
    }
  }

  it('are forked from the fork server, which check reports', async () => {
    const { parent, facts } = await parentOf({})
    expect(facts).toEqual({ available: true, path: builtForkServer })
    expect(readFileSync(`/proc/${parent}/comm`, 'utf8').trim()).toBe('toolvisor-spawn')
  })

  it('killed with the fork server they came from, say why in their exit; later launches get a new server', async () => {
    const runtime = makeRuntime({})
    const proc = runtime.start({ tool: tool('/bin/sh'), argv: ['-c', 'echo $PPID; exec sleep 60'] })
    expect(await eventually(() => proc.output.stdout().head.includes(10))).toBe(true)
    const served = Number(proc.output.stdout().head.toString().trim())
    expect(readFileSync(`/proc/${served}/comm`, 'utf8').trim()).toBe('toolvisor-spawn')
    process.kill(served, 'SIGKILL')
    expect(await proc.exit).toMatchObject({
      status: 'exited',
      signal: 'SIGKILL',
      reason: 'exit',
      why: expect.stringMatching(/^killed by toolvisor: the fork server ended \(SIGKILL\)/),
    })
    const { parent } = await parentOf({})
    expect(parent).not.toBe(served)
    const next = runtime.start({ tool: tool('/bin/sh'), argv: ['-c', 'exit 3'] })
    expect(await next.exit).toMatchObject({ status: 'exited', code: 3 })
    expect((await next.exit).why).toBeUndefined()
  })

  it('are spawned from this process when it is turned off, or missing, saying why', async () => {
    const off = await parentOf({ spawner: nativeSpawner({ forkServer: false }) })
    expect(off.facts).toEqual({ available: false, reason: 'turned off (forkServer: false)' })
    expect(off.parent).toBe(process.pid)
    const missing = await parentOf({
      spawner: nativeSpawner({ forkServer: '/nonexistent/toolvisor-spawnd' }),
    })
    expect(missing.facts).toMatchObject({
      available: false,
      reason: expect.stringContaining('toolvisor-spawnd is missing'),
    })
    expect(missing.parent).toBe(process.pid)
  })
})
