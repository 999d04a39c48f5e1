import { ReadBackToken } from '@toolvisor/answers'
import { definePlugin } from '@toolvisor/kernel'
import { MailboxToken } from '@toolvisor/mailbox'
import { RuntimeToken } from '@toolvisor/process-runtime'
import { SessionsToken, TasksToken } from '@toolvisor/tasks'
import { ModesToken, OneshotsToken, ToolsToken } from '@toolvisor/toolbox'
import { z } from 'zod'
import { Handles } from './internal/handles.js'
import { processesTool } from './internal/processes-tool.js'
import type { Service } from './internal/service.js'
import { serviceHandler } from './internal/service-handler.js'
import { wireSessionMail } from './internal/session-mail.js'
import { processesReadBack } from './read-back.js'
import { DEFAULT_RESTART } from './restart.js'

const positive = z.number().int().positive()

/** The operator's settings of the `processes` tool and of service tools. */
export const ProcessesConfig = z
  .object({
    /** The most bytes an answer holds; default: the runtime's `resultBytes` (256 KiB). */
    resultBytes: positive.optional(),
    /** The most events one tail, read or page returns (the tail cap). */
    maxEvents: positive.default(1000),
    /** How many of the last events and stderr lines `status` shows. */
    statusEvents: positive.default(10),
    statusStderrLines: positive.default(10),
    /** How long `slug.send` collects the events a service produces in reply, in ms (ruling 14). */
    replyMs: z.number().int().nonnegative().default(1000),
    /** Service slugs whose `slug.send` companion is left out (spec D6): the model may start them, never talk to them. */
    omitSend: z.array(z.string().min(1)).default([]),
    /** `on_exit: restart` (ruling 17): delays `baseMs` doubling up to `maxMs`, at most `max` in a row. */
    restart: z
      .object({
        baseMs: positive.default(DEFAULT_RESTART.baseMs),
        maxMs: positive.default(DEFAULT_RESTART.maxMs),
        max: positive.default(DEFAULT_RESTART.max),
        resetAfterMs: positive.default(DEFAULT_RESTART.resetAfterMs),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({})

/**
 * Services and the shared `processes` tool: registers the `service` mode handler (with each
 * service tool's `slug.send` companion) and `processes` into `tools`; gives every session of
 * `sessions` its mailbox, stops what a closing session owns before closing its mailbox, and mails
 * each task's completion to its owner; provides `read-back`, the words of the `processes` calls
 * other packages' answers name. Unloading it stops every service.
 */
export const processesPlugin = definePlugin({
  name: 'tool-processes',
  inject: {
    tools: ToolsToken,
    tasks: TasksToken,
    runtime: RuntimeToken,
    oneshots: OneshotsToken,
    modes: ModesToken,
    sessions: SessionsToken,
    mailbox: MailboxToken,
  },
  provides: [ReadBackToken],
  config: ProcessesConfig,
  apply(ctx, config) {
    const { tools, tasks, runtime, oneshots, modes, sessions, mailbox } = ctx.deps
    const options = { ...config, resultBytes: config.resultBytes ?? runtime.options.resultBytes }
    ctx.provide(ReadBackToken, processesReadBack)
    const handles = new Handles(tasks)
    const live = new Set<Service>()
    ctx.onDispose(wireSessionMail({ sessions, mailbox, tasks, handles }))
    ctx.onDispose(tools.register(processesTool({ tasks, oneshots, mailbox, sessions }, options)))
    const deps = { runtime, tasks, mailbox, sessions, handles, live }
    ctx.onDispose(modes.register('service', serviceHandler(deps, options)))
    // Runs first (LIFO): no restart is scheduled any more, and every service ends with its cancel,
    // but a kept one when the runtime keeps (decision 0113): it runs on for the next daemon.
    ctx.onDispose(async () => {
      const keeps = runtime.options.keeping !== undefined
      const ending = [...live].filter((service) => !(keeps && service.kept))
      await Promise.all(ending.map((service) => service.stop({ reason: 'runtime-disposed' })))
    })
  },
})
