/**
 * Containment through the CLI (decision 0097), as the attacker: a tool that forks without end, one
 * that allocates without end, and a fork bomb in a bash command, each through `toolvisor call` or a
 * JSON-RPC client of `toolvisor mcp`, unsandboxed and under both mechanisms. Every run that could
 * exhaust the host runs toolvisor in a box first (a cgroup with a small pids.max and memory limit:
 * `box` of @toolvisor/process-runtime/testing), so a limit that did not hold stops at the box; the
 * box must never have refused a fork.
 */
import type { ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { box, boxesHere, forker } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { bin, tempDir } from './helpers.js'
import { dir, hasBwrap, sandboxedTool } from './sandbox-helpers.js'

const skip = boxesHere()
const mechanisms = [undefined, ...(hasBwrap ? ['bwrap'] : []), 'landlock'] as const

/** Collects a child's output until it exits. */
function exited(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk))
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })))
}

const FORKER = `exec ${forker()}`

const HOG = `exec python3 -c '
x = []
while True: x.append(bytearray(1 << 20))
'`

/** `toolvisor call` of a tool declaring `limits` (and a sandbox under `mechanism`), in a box. */
async function boxedCall(limits: Record<string, unknown>, script: string, mechanism: string | undefined) {
  const tools = dir('tv-contained-')
  const runtime = { limits, ...(mechanism ? { sandbox: { fs: { read: ['.'] } } } : {}) }
  const tool = sandboxedTool(tools, 'contained', runtime)
  const boxed = box(400)
  try {
    const args = [
      bin,
      'call',
      tool,
      JSON.stringify({ script }),
      '--state-dir',
      tempDir('tv-contained-state-'),
    ]
    const child = boxed.spawn(process.execPath, [...args, ...(mechanism ? ['--sandbox', mechanism] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const result = await exited(child)
    return { ...result, boxRefused: boxed.refused(), boxPeak: boxed.peak() }
  } finally {
    boxed.remove()
  }
}

describe('limits through toolvisor call', () => {
  it.skipIf(skip === undefined)(`(skipped: ${skip})`, () => {})
  for (const mechanism of mechanisms) {
    const how = mechanism ?? 'unsandboxed'
    it.skipIf(skip !== undefined)(
      `${how}: 10,000 forks under pids 64 get EAGAIN at 64, the host does not notice`,
      async () => {
        const result = await boxedCall({ pids: 64 }, FORKER, mechanism)
        expect(result.code, result.stderr).toBe(0)
        // The tool's shell (and a sandbox's own processes) count: python gets 56 to 63 children.
        const refusedAfter = Number(/refused after (\d+)/.exec(result.stdout)?.[1])
        expect(refusedAfter).toBeGreaterThanOrEqual(56)
        expect(refusedAfter).toBeLessThanOrEqual(63)
        expect(result.boxRefused).toBe(0)
        expect(result.boxPeak).toBeLessThan(200)
      },
    )

    it.skipIf(skip !== undefined)(
      `${how}: allocating without end under memory 64M fails out of memory`,
      async () => {
        const result = await boxedCall({ memory: '64M' }, HOG, mechanism)
        expect(result.code).toBe(1)
        expect(result.stdout + result.stderr).toContain('failed: out of memory (limit 64 MiB)')
      },
    )
  }

  it('a declared limit above the ceiling refuses the tool, naming the field', async () => {
    const tools = dir('tv-ceiling-')
    const tool = sandboxedTool(tools, 'greedy', { limits: { pids: 100000 } })
    const child = (await import('node:child_process')).spawn(
      process.execPath,
      [bin, 'call', tool, '{"script":"true"}', '--state-dir', tempDir('tv-ceiling-state-')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const result = await exited(child)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(
      "$.runtime.limits.pids: 100000 processes is above the operator's ceiling of 1024 processes",
    )
  })
})

describe('a sandboxed tool cannot leave its cgroup', () => {
  for (const mechanism of mechanisms.filter((m) => m !== undefined)) {
    it.skipIf(skip !== undefined)(
      `${mechanism}: every cgroup.procs above its own is out of reach (${skip ?? 'runs here'})`,
      async () => {
        const tools = dir('tv-escape-')
        const targets = [
          '/sys/fs/cgroup/cgroup.procs',
          '/sys/fs/cgroup/unified/cgroup.procs',
          '/sys/fs/cgroup/pids/cgroup.procs',
        ]
        const script = targets
          .map((f) => `(echo $$ > ${f}) 2>/dev/null && echo "ESCAPED via ${f}"`)
          .join('\n')
        const tool = sandboxedTool(tools, 'escape', { sandbox: { fs: { read: ['.'] } } })
        const child = (await import('node:child_process')).spawn(
          process.execPath,
          [
            bin,
            'call',
            tool,
            JSON.stringify({ script: `${script}\necho tried` }),
            '--sandbox',
            mechanism,
            '--state-dir',
            tempDir('tv-escape-state-'),
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        )
        const result = await exited(child)
        expect(result.stdout).toContain('tried')
        expect(result.stdout).not.toContain('ESCAPED')
      },
    )
  }
})

/** A JSON-RPC client of `toolvisor mcp --bash` in a box: `call(command)` runs one bash command. */
function boxedBash(boxed: ReturnType<typeof box>) {
  const config = join(dir('tv-bash-config-'), 'toolvisor.json')
  writeFileSync(config, JSON.stringify({ bash: {}, stateDir: tempDir('tv-bash-state-') }))
  const child = boxed.spawn(process.execPath, [bin, 'mcp', '--config', config], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk))
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`)
  let id = 0
  const request = async (method: string, params: object) => {
    const mine = ++id
    send({ jsonrpc: '2.0', id: mine, method, params })
    const deadline = Date.now() + 60_000
    for (;;) {
      const found = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { id?: number; result?: { content: { text: string }[] } })
        .find((message) => message.id === mine)
      if (found) return found.result?.content?.map((c) => c.text).join('\n') ?? JSON.stringify(found)
      if (Date.now() > deadline) throw new Error(`no answer to ${method}: ${output.slice(-2000)}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return {
    child,
    async start() {
      await request('initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      })
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    },
    call: (command: string) =>
      request('tools/call', {
        name: 'bash',
        arguments: { command, description: 'a test command', timeoutMs: 20_000 },
      }),
  }
}

describe('the bash tools with the default bash.limits', () => {
  it.skipIf(skip !== undefined)(
    `a fork bomb in a command is contained and reported; the session goes on (${skip ?? 'runs here'})`,
    async () => {
      // The box holds the default 1024 processes and toolvisor's own, not much more.
      const boxed = box(1400, 4 * 1024 * 1024 * 1024)
      const bash = boxedBash(boxed)
      try {
        await bash.start()
        const bombed = await bash.call(':(){ :|:& };: ; sleep 3')
        expect(bombed).toContain('[hit the process limit (1024 processes)')
        expect(bombed).toContain('[toolvisor: hit the process limit (1024 processes)')
        expect(boxed.refused()).toBe(0)
        // The same session runs its next command, and nothing of the bomb is left.
        expect(await bash.call('echo still here')).toContain('still here')
        expect(boxed.peak()).toBeLessThan(1400)
      } finally {
        bash.child.kill('SIGKILL')
        await new Promise((resolve) => bash.child.once('close', resolve))
        boxed.remove()
      }
    },
  )
})
