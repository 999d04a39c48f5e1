import type { KeptRecord, ProcessRuntime } from '@toolvisor/process-runtime'
import type { LoadedTool } from './binary-tool.js'
import type { Modes, ProcessMode } from './modes.js'

/** What {@link adoptKept} did with each kept process it found. */
export interface KeptOutcome {
  readonly record: KeptRecord
  /** `adopted`: its mode took it over; `stopped`: nothing can take it (the reason), so it was ended. */
  readonly outcome: 'adopted' | 'stopped'
  readonly why?: string
}

/**
 * Takes over the kept processes an earlier daemon on this state directory left (decision 0113):
 * each goes to the handler of its kind's mode (`ModeHandler.adopt`), with the tool it was started
 * from as loaded now. One whose tool is not served any more, or whose mode keeps nothing, is taken
 * over plainly and stopped (never left to its keeper's bound): the outcome says why.
 */
export async function adoptKept(
  runtime: ProcessRuntime,
  modes: Modes,
  loaded: readonly LoadedTool[],
): Promise<KeptOutcome[]> {
  const outcomes: KeptOutcome[] = []
  for (const record of runtime.kept()) {
    const adopter = record.kind === undefined ? undefined : modes.keptAdopter(record.kind)
    if (adopter !== undefined) {
      const why = await adopter(record).then(
        () => undefined,
        (error: unknown) => (error as Error).message,
      )
      if (why === undefined) outcomes.push({ record, outcome: 'adopted' })
      else {
        await stopKept(runtime, record)
        outcomes.push({ record, outcome: 'stopped', why })
      }
      continue
    }
    const tool = loaded.find((candidate) => candidate.spec.slug === record.tool)
    const handler = record.kind === undefined ? undefined : modes.get(record.kind as ProcessMode)
    let why: string | undefined
    if (tool === undefined) why = `its tool ${record.tool} is not served any more`
    else if (handler?.adopt === undefined)
      why = `a ${record.kind ?? 'plain'} process is not kept across a restart`
    else {
      try {
        handler.adopt(record, tool)
        outcomes.push({ record, outcome: 'adopted' })
        continue
      } catch (error) {
        why = (error as Error).message
      }
    }
    await stopKept(runtime, record)
    outcomes.push({ record, outcome: 'stopped', why })
  }
  return outcomes
}

/** Takes a kept process over as a plain one and stops it at once, its tree and keeper with it. */
async function stopKept(runtime: ProcessRuntime, record: KeptRecord): Promise<void> {
  const tool = await runtime.preparePlain({ name: record.tool, file: '/bin/true' })
  const process = runtime.adopt(record, { tool, argv: [] })
  await process.launched
  await process.stop({ force: true })
}
