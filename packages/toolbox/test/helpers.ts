import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ReadBack, ReadBackToken } from '@toolvisor/answers'
import { describePlugin } from '@toolvisor/describe-v2'
import { definePlugin, Kernel } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { markedProcesses, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { SessionsToken, TasksToken, tasksPlugin } from '@toolvisor/tasks'
import { afterEach, expect } from 'vitest'
import type { z } from 'zod'
import {
  BinaryToolsToken,
  ModesToken,
  OneshotsToken,
  type ToolboxConfig,
  type ToolCallContext,
  ToolsToken,
  toolboxPlugin,
} from '../src/index.js'

const here = dirname(fileURLToPath(import.meta.url))
export const fixtures = join(here, 'fixtures')
export const examples = resolve(here, '../../../examples/tools')

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

export function tempDir(prefix = 'tv-toolbox-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A `read-back` provider worded as `@toolvisor/tool-processes` words its `processes` calls (which
 * its own tests check against the tool itself): what the toolbox's answers name when a reading tool
 * is composed. This package cannot depend on tool-processes, which depends on it.
 */
const processesWords: ReadBack = {
  call: (request) => `processes ${processesWords.args(request)}`,
  args(request) {
    if (request.command !== 'output') return JSON.stringify(request)
    const { command, process, stream, offset } = request
    const which = stream === 'stderr' ? { stream } : {}
    return JSON.stringify({ command, process, ...which, ...(offset ? { offset } : {}) })
  },
}

const readBackPlugin = definePlugin({
  name: 'test-read-back',
  provides: [ReadBackToken],
  apply: (ctx) => ctx.provide(ReadBackToken, processesWords),
})

/**
 * A kernel with describe, the runtime and the toolbox, loaded from `toolboxes`, and a `read-back`
 * provider unless `readBack` is false. After the test it is disposed and the test fails if any
 * process it started is still alive.
 */
export async function compose(
  toolboxes: NonNullable<z.input<typeof ToolboxConfig>['toolboxes']>,
  toolbox: Record<string, unknown> = {},
  runtimeConfig: Record<string, unknown> = {},
  { readBack = true }: { readonly readBack?: boolean } = {},
) {
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, { stateDir: tempDir('tv-state-'), spawner: 'native', ...runtimeConfig })
  kernel.use(tasksPlugin)
  if (readBack) kernel.use(readBackPlugin)
  const handle = kernel.use(toolboxPlugin, { toolboxes, ...toolbox })
  await handle
  const runtime = kernel.get(RuntimeToken)!
  const runId = (runtime as unknown as { runId: string }).runId
  cleanups.push(async () => {
    await kernel.dispose()
    const deadline = Date.now() + 2000
    while (markedProcesses(runId).length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20))
    expect(markedProcesses(runId), 'processes left running').toEqual([])
  })
  return {
    kernel,
    tools: kernel.get(ToolsToken)!,
    binary: kernel.get(BinaryToolsToken)!,
    tasks: kernel.get(TasksToken)!,
    modes: kernel.get(ModesToken)!,
    oneshots: kernel.get(OneshotsToken)!,
    sessions: kernel.get(SessionsToken)!,
    runtime,
    runId,
  }
}

export function ctx(extra: Partial<ToolCallContext> = {}): ToolCallContext {
  return { sessionId: 'session-1', signal: new AbortController().signal, ...extra }
}

export function textOf(result: { content: readonly { text: string }[] }): string {
  return result.content.map((c) => c.text).join('\n')
}

/** Writes an executable shell script `name` into `dir` and returns its path. */
export function writeTool(dir: string, name: string, script: string): string {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/sh\n${script}\n`)
  chmodSync(path, 0o755)
  return path
}

/**
 * A tool script that answers `describe` with `document` (JSON) and `run` with `run` (shell). The
 * document is written through a quoted heredoc, so it may hold any character.
 */
export function toolScript(document: Record<string, unknown>, run: string): string {
  return `case "$1" in\ndescribe) cat <<'JSON'\n${JSON.stringify(document)}\nJSON\n;;\nrun) shift; ${run} ;;\nesac`
}

/** A fresh toolbox holding one executable shell script per entry (`name: script`). */
export function boxWith(scripts: Readonly<Record<string, string>>): string {
  const box = tempDir()
  for (const [name, script] of Object.entries(scripts)) writeTool(box, name, script)
  return box
}

/** A protocol 2 tool script with no arguments: `extra` adds to its describe document. */
export function v2Tool(slug: string, extra: Record<string, unknown>, run: string): string {
  return toolScript({ protocol: 2, slug, description: `the ${slug} tool`, args: [], ...extra }, run)
}
