import { existsSync, rmSync } from 'node:fs'
import { sandboxUserDir } from '@toolvisor/process-runtime/testing'
import type { Approval, ApprovalOutcome, ApprovalRequest } from '@toolvisor/toolbox'
import { afterEach } from 'vitest'
import { denialMarker, ESCALATION_HINT, type SandboxMode } from '../src/modes.js'

const made: string[] = []
afterEach(() => {
  while (made.length > 0) rmSync(made.pop()!, { recursive: true, force: true })
})

/**
 * A directory the sandbox user can write (0777), outside /tmp and /var/tmp: a private /tmp would
 * hide it and Landlock's workspace-write grants the host's /tmp, so only a place elsewhere shows
 * what the mode itself allows. Next to this file, or (a checkout the sandbox user cannot enter)
 * under /srv or the like. Removed after the test.
 */
export function openDir(prefix: string): string {
  const dir = sandboxUserDir(import.meta.dirname, prefix)
  made.push(dir)
  return dir
}

/** The two mechanisms every sandbox test runs under. */
export const MECHANISMS = ['bwrap', 'landlock'] as const

/** Seed 001's lines of a denied run in `mode`, with the escalation hint, before its exit code. */
export function deniedTail(mode: SandboxMode, code = 1): string {
  return `${denialMarker(mode)}\n${ESCALATION_HINT}\n[exit code: ${code}]`
}

/** A host's approval service that answers `outcome` and remembers every question. */
export function answering(outcome: ApprovalOutcome): Approval & { asked: ApprovalRequest[] } {
  const asked: ApprovalRequest[] = []
  return {
    asked,
    async request(request) {
      asked.push(request)
      return outcome
    },
  }
}

export { existsSync }
