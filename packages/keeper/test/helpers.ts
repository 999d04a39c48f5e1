// What the keeper's tests share: the kept service they run, and whether a process still lives.
import { readFileSync } from 'node:fs'

/**
 * `python3 -u -c ...`: a tick every 20 ms (`tick N`), and an answer to each line on its stdin
 * (`echo: WORD`, a line as the runtime writes an event, JSON, or as it is); `quit` ends it, code 7.
 */
export const ticker = [
  '-u',
  '-c',
  [
    'import sys, threading, time',
    'def tick():',
    '    n = 0',
    '    while True:',
    '        print(f"tick {n}", flush=True); n += 1; time.sleep(0.02)',
    'threading.Thread(target=tick, daemon=True).start()',
    'for line in sys.stdin:',
    "    word = line.strip().strip('\"')",
    '    if word == "quit": sys.exit(7)',
    '    print(f"echo: {word}", flush=True)',
  ].join('\n'),
]

/** The process lives (a zombie does not). */
export function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}
