/**
 * The terminal of a process started with one (issue 31, decision 0110): keystrokes in, the size,
 * the hang-up, and the recording of its session kept in the spill directory.
 */
import type { TerminalSize } from '@toolvisor/launchers'
import type { ProcessOutput } from '@toolvisor/process-output'
import type { HeldDirectory, SpillLedger } from '@toolvisor/run-state'
import type { Child } from '../spawner.js'
import type { ProcessTerminal, StartOptions } from '../types.js'
import { checkSize, typeInto } from './process-launch.js'
import { Recording } from './recording.js'

/** What the terminal reaches of its process. */
export interface TerminalOwner {
  readonly id: string
  readonly tool: string
  /** Resolves once its launch settled. */
  launched(): Promise<void>
  /** The child once launched. */
  child(): Child | undefined
  finished(): boolean
  /** Activity (a keystroke is one, for the idle timeout). */
  touch(): void
  closeStdin(): void
}

/** The recording of launch `id`'s terminal: `ID.cast` in the spill directory, bounded as its spill files. */
export function recordingOf(
  spill: HeldDirectory,
  id: string,
  start: StartOptions,
  bounds: { readonly cap: number; readonly allowance: SpillLedger },
): Recording {
  const env = Object.fromEntries(
    ['TERM', 'SHELL'].flatMap((name) => (start.env?.[name] ? [[name, start.env[name]]] : [])),
  )
  return new Recording({ file: spill.file(`${id}.cast`), size: start.terminal!, ...bounds, env })
}

/** The terminal of a start that asked for one: keystrokes in, the size, the hang-up, the recording. */
export function processTerminal(
  initial: TerminalSize,
  recording: Recording,
  owner: TerminalOwner,
): ProcessTerminal {
  let size = initial
  return {
    get size() {
      return size
    },
    recording: recording.path,
    type: async (bytes) => {
      // Once launched, written on this turn: a keystroke waits for nothing it does not need.
      if (owner.child() === undefined) await owner.launched()
      owner.touch()
      await typeInto(owner.finished() ? undefined : owner.child()?.stdin, bytes, owner)
      recording.input(bytes)
    },
    resize: (next) => {
      checkSize(next)
      const asked = { columns: next.columns, rows: next.rows }
      size = asked
      recording.resize(asked)
      // Once launched (a resize right after the start reaches the terminal it made).
      void owner.launched().then(() => {
        if (!owner.finished()) owner.child()?.resize?.(asked)
      })
    },
    hangUp: () => owner.closeStdin(),
  }
}

/** What the child writes goes to its output (and a terminal's to its recording too). */
export function pipeOutput(child: Child, output: ProcessOutput, recording: Recording | undefined): void {
  if (recording)
    child.stdout?.on('data', (chunk: Buffer) => {
      output.pushStdout(chunk)
      recording.output(chunk)
    })
  else child.stdout?.on('data', (chunk: Buffer) => output.pushStdout(chunk))
  child.stderr?.on('data', (chunk: Buffer) => output.pushStderr(chunk))
}
