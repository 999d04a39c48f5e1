/**
 * Helpers of the sandbox tests that go through the CLI's composition root: tool directories the
 * sandbox user can enter (under /var/tmp, mode 0755: `tmp: shared` grants /tmp itself, and a
 * fresh clone may sit under a 0700 parent), sh tools that declare a runtime, and a composed
 * toolvisor to call them through.
 */
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolCallContext } from '@toolvisor/toolbox'
import { afterAll, afterEach } from 'vitest'
import { ConfigFile } from '../src/config.js'
import { compose } from '../src/internal/compose.js'

export const isRoot = process.geteuid?.() === 0
export const hasBwrap = existsSync('/usr/bin/bwrap')
export const mechanisms = ['bwrap', 'landlock'] as const
export type Mechanism = (typeof mechanisms)[number]

const dirs: string[] = []
const disposers: Array<() => Promise<void>> = []

/** A fresh directory under /var/tmp, mode 0755 (`mode` to change it), removed after the file's tests. */
export function dir(prefix: string, mode = 0o755): string {
  const made = realpathSync(mkdtempSync(join('/var/tmp', prefix)))
  chmodSync(made, mode)
  dirs.push(made)
  return made
}

afterEach(async () => {
  while (disposers.length > 0) await disposers.pop()!()
})
afterAll(() => {
  for (const made of dirs.splice(0)) rmSync(made, { recursive: true, force: true })
})

/**
 * Writes a tool that declares `runtime` and runs its `script` argument with sh. `describe` may be
 * replaced by a script that prints the document itself (`$DOC` holds it).
 */
export function sandboxedTool(
  box: string,
  name: string,
  runtime: Record<string, unknown>,
  check = 'echo \'{"ok": true}\'',
  describeScript = 'printf "%s\\n" "$DOC"',
): string {
  const describe = {
    protocol: 2,
    slug: name,
    check: true,
    description: `runs a script under ${JSON.stringify(runtime)}`,
    args: [
      {
        name: 'script',
        description: 'sh script',
        type: 'text',
        backing_type: 'string',
        arity: 'single',
        mode: 'positional',
      },
    ],
    runtime,
  }
  const path = join(box, name)
  const doc = JSON.stringify(describe).replaceAll("'", "'\\''")
  writeFileSync(
    path,
    `#!/bin/sh\nDOC='${doc}'\ncase "$1" in\ndescribe) ${describeScript} ;;\ncheck) ${check} ;;\nrun) exec /bin/sh -c "$2" ;;\nesac\n`,
  )
  chmodSync(path, 0o755)
  return path
}

/** A toolvisor composed over one toolbox with `config` (toolvisor.json keys); disposed after the test. */
export async function load(box: string, config: Record<string, unknown>) {
  const composed = await compose(
    ConfigFile.parse({ toolboxes: [box], stateDir: dir('tv-sb-state-'), ...config }),
  )
  disposers.push(() => composed.kernel.dispose())
  const call = async (name: string, script: string, extra: Partial<ToolCallContext> = {}) => {
    const result = await composed.tools.call(
      name,
      { script },
      { sessionId: 's', signal: new AbortController().signal, ...extra },
    )
    return { isError: result.isError, text: result.content.map((c) => c.text).join('\n') }
  }
  return { ...composed, call }
}
