import type { Readable } from 'node:stream'

/**
 * Reads bwrap's `--info-fd` JSON (`{"child-pid": N, ...}`, written once, then the fd is closed)
 * and calls `found` with N: the sandbox's pid 1, whose process group and session the tool is in.
 */
export function readChildPid(stream: Readable, found: (pid: number) => void): void {
  let text = ''
  let done = false
  const attempt = () => {
    if (done) return
    try {
      const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid']
      if (typeof pid === 'number' && Number.isInteger(pid) && pid > 1) {
        done = true
        found(pid)
      }
    } catch {
      // not complete yet
    }
  }
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    if (text.length < 65_536) text += chunk
    attempt()
  })
  stream.on('end', attempt)
  stream.on('error', () => {})
}
