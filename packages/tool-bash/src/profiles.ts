import type { TaskCompletion } from '@toolvisor/process-runtime'
import type { Tool } from '@toolvisor/toolbox'
import type { ProfileName } from './config.js'
import { dshTools } from './dsh.js'
import { hyperhiveReport, hyperhiveTools } from './hyperhive.js'
import { completionNotice } from './render.js'
import type { BashServices } from './shared.js'
import { toolnexusTools } from './toolnexus.js'

/**
 * One seed's words over the same tasks and launcher: adding a profile adds words, not machinery
 * (RFC 003's test).
 */
export interface Profile {
  tools(services: BashServices): Tool[]
  /** The first step of a background task's stop. */
  readonly cancelSignal: 'SIGTERM' | 'SIGINT'
  /** The body of the mail a finished task posts to its owner; absent: the seed has none. */
  notice?(services: BashServices, completion: TaskCompletion): unknown
}

/** The profiles, by name. */
export const PROFILE: Readonly<Record<ProfileName, Profile>> = {
  dsh: {
    tools: dshTools,
    cancelSignal: 'SIGTERM',
    notice: (_services, completion) => completionNotice(completion.task),
  },
  hyperhive: {
    tools: hyperhiveTools,
    cancelSignal: 'SIGINT',
    notice: (services, completion) => hyperhiveReport(services, completion.task, completion.task.owner),
  },
  toolnexus: { tools: toolnexusTools, cancelSignal: 'SIGTERM' },
}
