/**
 * F8 of the 2026-12-01 review, as the report ran it: a local user owns the `--state-dir` (mode
 * 0777, and its `runs/`) that root's toolvisor is started with. Its swapper renames each new run
 * directory and puts a symlink in its place, to a directory of its own whose
 * `spill/proc-N.stdout` are links into a folder only root may write. Root's toolvisor then spilled
 * a tool's output through the link. toolvisor must refuse such a state directory at start.
 */
import type { ChildProcess } from 'node:child_process'
import { chmodSync, chownSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { asUser, asUserSkip, ordinaryUser } from './as-user.js'
import { eventually, tagged } from './helpers.js'
import { rawMcp } from './raw-mcp.js'
import { dir, hasBwrap, sandboxedTool } from './sandbox-helpers.js'

/** The report's swap.sh (Appendix B), in sh: at most 30 s, then it gives up. */
const SWAP = `runs=$1; sd=$2; target=$3; i=0
while [ $i -lt 600 ]; do
  for d in $(ls "$runs"); do
    case $d in x-*) continue;; *-*-*-*) ;; *) continue;; esac
    [ -L "$runs/$d" ] && continue
    mv "$runs/$d" "$runs/x-$d" || continue
    mkdir -p "$sd/evil-$d/spill"
    n=1; while [ $n -le 30 ]; do ln -s "$target/pwned-proc-$n" "$sd/evil-$d/spill/proc-$n.stdout"; n=$((n+1)); done
    ln -s "$target/pwned-processes.log" "$sd/evil-$d/processes.log"
    ln -s "$sd/evil-$d" "$runs/$d"; echo "swapped $d"
  done
  sleep 0.05; i=$((i+1))
done`

/** Resolves with the first line of `child`'s stdout that matches, or undefined when it ends first. */
function lineOf(child: ChildProcess, match: RegExp): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const found = text.split('\n').find((line) => match.test(line))
      if (found !== undefined) resolve(found)
    })
    child.once('close', () => resolve(undefined))
  })
}

const skip = asUserSkip ?? (hasBwrap ? undefined : 'needs bwrap (the report ran a bwrap tool)')

describe.skipIf(skip !== undefined)(`F8: a state dir a local user owns (${skip ?? 'root'})`, () => {
  it("is refused at start, naming it, its owner and the fix; the user's swapper never gets root's spill writes", async () => {
    const user = ordinaryUser()
    // /var/tmp (sticky) > base (root, 0755) > sd (the user's, 0777) > runs (the user's, 0777).
    const base = dir('tv-f8-')
    const sd = join(base, 'secrev-sd')
    const runs = join(sd, 'runs')
    for (const made of [sd, runs]) {
      mkdirSync(made)
      chmodSync(made, 0o777)
      chownSync(made, user.uid, user.gid)
    }
    // A folder only root may write: where the links point.
    const target = join(base, 'secrev-target')
    mkdirSync(target, { mode: 0o755 })
    const box = dir('tv-f8-box-')
    sandboxedTool(box, 'probe', { sandbox: { fs: { read: ['.'] }, net: 'none' } })

    const swapTag = `f8-swapper-${process.pid}`
    const swapper = asUser('/bin/sh', ['-c', SWAP, 'swap', runs, sd, target], {
      env: { TV_TEST_TAG: swapTag },
    })
    const swapped = lineOf(swapper, /^swapped /)
    try {
      const server = rawMcp(['--toolbox', box, '--sandbox', 'bwrap'], { stateDir: sd })
      const first = await Promise.race([server.exited.then(() => 'exited'), swapped.then(() => 'swapped')])
      if (first === 'swapped') {
        // toolvisor started in it: the run directory is already the user's link. The report's second call.
        await server.initialize()
        server.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'probe', arguments: { script: "head -c 2000000 /dev/zero | tr '\\0' Z" } },
        })
        await server.waitForMessage((m) => m.id === 1)
        server.child.stdin.end()
        await server.exited
      }
      // Root wrote nothing where the links point.
      expect(readdirSync(target)).toEqual([])
      expect(await server.exited).toBe(2)
      expect(server.stderr()).toBe(
        `toolvisor mcp: the state directory ${sd} is not safe to use: ${sd} is owned by uid ${user.uid}, ` +
          `not by toolvisor's uid 0, so that user could swap what toolvisor writes there for links to any file: ` +
          `chown 0 ${sd} and chmod 700 ${sd}, or start toolvisor with another --state-dir\n`,
      )
      // Nothing was made in it.
      expect(readdirSync(runs)).toEqual([])
    } finally {
      swapper.kill('SIGKILL')
      expect(await eventually(() => tagged(swapTag).length === 0)).toBe(true)
    }
  }, 60_000)
})
