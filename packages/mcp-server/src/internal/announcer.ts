import type { Server } from '@modelcontextprotocol/server'
import type { ToolRegistry } from '@toolvisor/toolbox'

/** What a `ToolAnnouncer` watches and where it tells. */
export interface ToolAnnouncerOptions {
  readonly tools: ToolRegistry
  readonly server: Server
  readonly sessionId: string
  /** Logs one line (already prefixed with the server name). */
  readonly log: (line: string) => void
  /**
   * The client speaks 2026-07-28, which has no `notifications/initialized`: a change is told at
   * once, and the SDK's entry sends it to the client's listen subscriptions only.
   */
  readonly modern?: boolean
  /** The toolboxes' first load, when it is still under way at the start (`McpServerOptions.firstLoad`). */
  readonly firstLoad?: Promise<unknown>
}

/**
 * Tells the operator (the log) and the client (`notifications/tools/list_changed`) what the
 * registry serves: at connect, and after every change, so tools that finish loading after the
 * server started are announced. Changes in one turn (a toolbox registering its tools) make one
 * announcement. The client hears of a change only once it has sent `notifications/initialized`;
 * before that, the `tools/list` it will send shows the change anyway.
 */
export class ToolAnnouncer {
  private logged = 0
  private served: string
  private initialized = false
  private flush: NodeJS.Immediate | undefined
  private unsubscribe: (() => void) | undefined
  /** `loading` until the first load settles, `loaded` until the change it made is announced. */
  private load: 'loading' | 'loaded' | 'done' = 'done'

  constructor(private readonly options: ToolAnnouncerOptions) {
    this.served = this.names()
    this.initialized = options.modern === true
    options.server.oninitialized = () => {
      this.initialized = true
    }
    if (options.firstLoad) {
      this.load = 'loading'
      const settled = () => {
        if (this.load === 'loading') this.load = 'loaded'
      }
      options.firstLoad.then(settled, settled)
    }
  }

  /** True when the registry can tell of changes: the server then declares `tools.listChanged`. */
  static canAnnounce(tools: ToolRegistry): boolean {
    return typeof tools.onChange === 'function'
  }

  /**
   * Logs the load reports and what is served, and starts watching. `quiet`: another server of the
   * same connection logged them already, so only later reports and changes are logged.
   */
  start(quiet = false): void {
    if (quiet) this.logged = this.options.tools.loadErrors().length
    else {
      this.logReports()
      // What is served before the toolboxes loaded is not all there will be: said, not left to look like a failure.
      const loading = this.load === 'loading' ? ' while the toolboxes load' : ''
      this.options.log(`serving ${this.summary()} as session ${this.options.sessionId}${loading}`)
    }
    this.unsubscribe = this.options.tools.onChange?.(() => {
      this.flush ??= setImmediate(this.announce)
    })
  }

  /** Stops watching (the connection is over). */
  stop(): void {
    this.unsubscribe?.()
    this.unsubscribe = undefined
    if (this.flush) clearImmediate(this.flush)
    this.flush = undefined
  }

  private readonly announce = (): void => {
    this.flush = undefined
    this.logReports()
    const names = this.names()
    if (names === this.served) return
    this.served = names
    // The first load's tools are what it serves at last (the host says the load ended), not a change.
    const news = this.load === 'loaded' ? '' : 'tools changed: '
    if (this.load === 'loaded') this.load = 'done'
    this.options.log(`${news}serving ${this.summary()}`)
    // The connection may be closing; a lost announcement is moot then.
    if (this.initialized) this.options.server.sendToolListChanged().catch(() => {})
  }

  private logReports(): void {
    const reports = this.options.tools.loadErrors()
    const fresh = reports.slice(this.logged)
    this.logged = reports.length
    for (const report of fresh)
      if (report.severity === 'error') this.options.log(`tool not loaded: ${report.message}`)
    for (const report of fresh)
      if (report.severity === 'warning') this.options.log(`warning: ${report.message}`)
  }

  private summary(): string {
    const count = this.options.tools.list().length
    const failed = this.options.tools.loadErrors().filter((report) => report.severity === 'error').length
    return `${count} tool${count === 1 ? '' : 's'}${failed > 0 ? ` (${failed} failed to load)` : ''}`
  }

  private names(): string {
    return JSON.stringify(this.options.tools.list().map((tool) => tool.name))
  }
}
