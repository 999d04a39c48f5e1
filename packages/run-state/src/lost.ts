/** A process a previous run recorded as running and that was lost when that run ended. */
export interface LostProcess {
  readonly id: string
  /** The run it belonged to. */
  readonly run: string
  readonly tool: string
  readonly session?: string
  readonly task?: string
  /** What it was (`stream`, `service`, `bash`, `oneshot`), as its task recorded it. */
  readonly kind?: string
  readonly pid: number
  readonly startedAt: string
  /** Whether leftover processes of its group were found and killed now. */
  readonly killed: number
  /** When a start found it lost (ISO time). */
  readonly reportedAt?: string
  /**
   * True once the session that owned it was told (its report posted as mail, `tasks.tellLost`):
   * kept in the run's directory, so no later start tells it again.
   */
  readonly told?: boolean
}
