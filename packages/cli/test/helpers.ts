import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { processesWith } from '@toolvisor/process-runtime/testing'
import { afterEach, beforeAll, expect } from 'vitest'

const here = dirname(fileURLToPath(import.meta.url))
export const fixtures = join(here, 'fixtures')
export const examples = resolve(here, '../../../examples/tools')
export const bin = resolve(here, '../dist/bin.js')

/** The argv (for `node`) of `toolvisor mcp --bash` under `mechanism` in bash sandbox `mode`, then `rest`. */
export function bashMcpArgs(mechanism: string, mode: string, ...rest: string[]): string[] {
  return [bin, 'mcp', '--bash', '--sandbox', mechanism, '--bash-sandbox', mode, ...rest]
}

beforeAll(() => {
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: build the CLI first (pnpm --filter @toolvisor/cli build)`)
})

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

export function tempDir(prefix = 'tv-cli-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Pids of live processes whose environment holds `TV_TEST_TAG=tag` (every process the CLI started inherits it). */
export function tagged(tag: string): number[] {
  return processesWith('TV_TEST_TAG', tag)
}

/** Waits until `condition()` holds (polling every 20 ms), for at most `ms`; returns whether it did. */
export { eventually } from '@toolvisor/process-runtime/testing'

/** The command lines of the live processes carrying the tag. */
export function taggedCommands(tag: string): string[] {
  return tagged(tag).flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()]
    } catch {
      return []
    }
  })
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `toolvisor ARGS` as a subprocess with its own state dir and a tag in its environment; after
 * the test, fails if any process carrying the tag is alive.
 */
export function toolvisor(
  args: string[],
  options: { input?: string; tag?: string } = {},
): { child: ChildProcess; done: Promise<Run>; tag: string } {
  const tag = options.tag ?? randomUUID()
  const stateDir = tempDir('tv-cli-state-')
  const child = spawn(
    process.execPath,
    [
      bin,
      ...args,
      ...(args[0] === 'call' || args[0] === 'describe' || args[0] === 'mcp' ? ['--state-dir', stateDir] : []),
    ],
    {
      env: { ...process.env, TV_TEST_TAG: tag },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  )
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c) => (stdout += c))
  child.stderr!.on('data', (c) => (stderr += c))
  if (options.input !== undefined) child.stdin!.end(options.input)
  const done = new Promise<Run>((res) => child.once('close', (code) => res({ code, stdout, stderr })))
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL')
    await done
    const deadline = Date.now() + 2000
    while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
    expect(tagged(tag), 'processes left running').toEqual([])
  })
  return { child, done, tag }
}

export async function run(args: string[], options: { input?: string } = {}): Promise<Run> {
  return toolvisor(args, options).done
}

/**
 * The id in hyperhive's `task started: id=<id>` (seed 002's auto-generated hex id, 8 digits),
 * failing the test when the answer is anything else.
 */
export function startedId(text: string): string {
  const id = /^task started: id=([0-9a-f]{8})$/.exec(text)?.[1]
  if (id === undefined) throw new Error(`not a hyperhive start: ${JSON.stringify(text)}`)
  return id
}

/** Waits (at most `ms`) until no process of `tag` is left, then fails naming any that is. */
export async function expectNoneTagged(tag: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (tagged(tag).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
  expect(taggedCommands(tag), 'processes left running').toEqual([])
}
