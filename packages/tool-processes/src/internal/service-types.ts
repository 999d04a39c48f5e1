import type { ManagedProcess, SequencedEvent } from '@toolvisor/process-runtime'
import type { RestartPolicy } from '../restart.js'
import type { ServiceMail } from './service-mail.js'

/** What a service is started with. */
export interface ServiceOptions {
  /** Its handle in the session (`p1`). */
  readonly handle: string
  /** The model-facing tool that started it (`log_watcher`). */
  readonly tool: string
  readonly onExit: 'report' | 'restart' | 'fail'
  readonly restart: RestartPolicy
  /** `runtime.timeout.idle`, for the note of an idle stop. */
  readonly idleSeconds: number | null | undefined
  /** Starts one run; `onEvent` hears each of its events. */
  readonly launch: (onEvent: (event: SequencedEvent) => void) => ManagedProcess
  /** Records a restarted run's process as this task's (so a crash of toolvisor reports it lost). */
  readonly annotate: (processId: string) => void
  /**
   * Records that it waits to start again (a restart pending): should toolvisor die meanwhile, the
   * next start reports it lost. Returns the release (`ProcessRuntime.waiting`).
   */
  readonly waiting: () => () => void
  /** Where its news goes; absent: nowhere. */
  readonly mail: ServiceMail | undefined
  /** The declared `input.event` schema (what `send` accepts); absent when it takes no input. */
  readonly input?: unknown
  /** How many times daemons re-adopted it (decision 0113): its restarts' mail ids say so, never repeating one mailed before. */
  readonly resumed?: number
}

/** One restart, as `processes status` shows it and its control mail says it. */
export interface RestartRecord {
  /** Its number in the current row (1 to `max`). */
  readonly restart: number
  readonly at: string
  /** How the run before it ended. */
  readonly after: string
  readonly in_seconds: number
}
