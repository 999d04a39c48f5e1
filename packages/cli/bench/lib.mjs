// What the CLI's benches share: the built command and a toolbox with one trivial tool.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** `toolvisor`, as the build left it. */
export const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

/**
 * A fresh temp dir (`root`, the caller removes it) holding `toolbox/trivial`, a v1 tool that
 * prints `ok`: the call whose cost is all toolvisor's and the spawn's.
 */
export function trivialToolbox(name) {
  const root = mkdtempSync(join(tmpdir(), `tv-bench-${name}-`))
  const toolbox = join(root, 'toolbox')
  mkdirSync(toolbox)
  const tool = join(toolbox, 'trivial')
  writeFileSync(
    tool,
    `#!/bin/sh
case "$1" in
describe) echo '{"slug": "trivial", "description": "prints ok", "args": []}' ;;
*) echo ok ;;
esac
`,
  )
  chmodSync(tool, 0o755)
  return { root, toolbox, tool }
}
