import type { TaskCompletion } from '@toolvisor/tasks'
import type { Guidance, Tool } from '@toolvisor/toolbox'
import type { ProfileName } from './config.js'
import { completionNotice } from './internal/render.js'
import { dshBash, dshKill, dshNetworkHint, dshOutput } from './profiles/claude-code-like.js'
import { codexWriteStdin, execCommand } from './profiles/codex.js'
import { toolnexusBash, toolnexusKill, toolnexusNetworkHint, toolnexusOutput } from './profiles/codex-like.js'
import type { BashServices } from './profiles/common.js'
import { hyperhiveKill, hyperhiveReport, hyperhiveRun, hyperhiveStatus } from './profiles/daemon-like.js'
import { dshWriteStdin, hyperhiveSend, toolnexusWriteStdin } from './profiles/write-stdin.js'

/**
 * One seed's words over the same tasks and launcher: adding a profile adds words, not machinery
 * (RFC 003's test).
 */
export interface Profile {
  /** Its tools, each made over the shared services. */
  readonly tools: ReadonlyArray<(services: BashServices) => Tool>
  /** The first step of a background task's stop. */
  readonly cancelSignal: 'SIGTERM' | 'SIGINT'
  /** The body of the mail a finished task posts to its owner; absent: the seed has none. */
  notice?(services: BashServices, completion: TaskCompletion): unknown
  /** The system-prompt section the seed contributes; absent: it has none. */
  readonly guidance?: Guidance
  /**
   * The line a result shows after connections blocked for not being in the allow list, naming the
   * hosts (decision 0112); absent: its results show none (hyperhive says it in its JSON, codex
   * cannot ask for names).
   */
  readonly networkHint?: (hosts: readonly string[]) => string
}

/**
 * Seed 001's `tool:bash` prompt section (order 105), exactly: the cross-call habit the per-tool
 * descriptions cannot carry.
 */
export const BASH_GUIDANCE: Guidance = {
  name: 'tool:bash',
  description: 'How to read bash results: the cross-call habit the tool descriptions cannot carry (seed 001)',
  text: 'Check the [exit code: N] marker on every bash result; investigate failures before moving on.',
  order: 105,
}

/** The profiles, by name. */
export const PROFILE: Readonly<Record<ProfileName, Profile>> = {
  dsh: {
    tools: [dshBash, dshOutput, dshKill, dshWriteStdin],
    cancelSignal: 'SIGTERM',
    notice: (_services, completion) => completionNotice(completion.task),
    guidance: BASH_GUIDANCE,
    networkHint: dshNetworkHint,
  },
  hyperhive: {
    tools: [hyperhiveRun, hyperhiveStatus, hyperhiveKill, hyperhiveSend],
    cancelSignal: 'SIGINT',
    notice: (services, completion) => hyperhiveReport(services, completion.task, completion.task.owner),
  },
  toolnexus: {
    tools: [toolnexusBash, toolnexusOutput, toolnexusKill, toolnexusWriteStdin],
    cancelSignal: 'SIGTERM',
    networkHint: toolnexusNetworkHint,
  },
  codex: { tools: [execCommand, codexWriteStdin], cancelSignal: 'SIGTERM' },
}
