// What a harness does with `serve --notify unix:PATH`: listen on the socket and keep every item.
import { readFileSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, expect } from 'vitest'
import { tagged, taggedCommands, tempDir } from './helpers.js'

/** An item as the harness gets it (decision 0051). */
export interface Item {
  readonly v: number
  readonly key: string
  readonly op: 'set' | 'clear'
  readonly state?: 'running' | 'done'
  readonly session: string | null
  readonly summary?: string
  readonly task?: { readonly kind: string; readonly tool: string; readonly label?: string }
  readonly seq: number
}

const servers: Array<{ server: Server; sockets: Socket[] }> = []
afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy()
    await new Promise((resolve) => server.close(resolve))
  }
})

/**
 * A harness's socket: `reading` keeps every item it reads; `stalled` accepts connections and never
 * reads a byte (its peer's writes fill the socket and wait).
 */
export async function harness(mode: 'reading' | 'stalled' = 'reading') {
  const path = join(tempDir('tv-notify-'), 'harness.sock')
  const items: Item[] = []
  const sockets: Socket[] = []
  const server = createServer((socket) => {
    sockets.push(socket)
    if (mode === 'stalled') return void socket.pause()
    let buffered = ''
    socket.setEncoding('utf8')
    socket.on('data', (text: string) => {
      const lines = (buffered + text).split('\n')
      buffered = lines.pop()!
      for (const line of lines) items.push(JSON.parse(line) as Item)
    })
  })
  server.on('close', () => rmSync(path, { force: true }))
  servers.push({ server, sockets })
  await new Promise<void>((resolve) => server.listen(path, resolve))
  return {
    path,
    items,
    connections: () => sockets.length,
    /** What one key got, in order: `running`, `done`, `clear`. */
    of: (key: string) => items.filter((item) => item.key === key).map((item) => item.state ?? item.op),
  }
}

/** The pid of the tagged process whose command line has `text`. */
export function pidOf(tag: string, text: string): number {
  const pid = tagged(tag).find((p) => commandOf(p).includes(text))
  expect(pid, `${text} among ${taggedCommands(tag).join('; ')}`).toBeDefined()
  return pid!
}

export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

/** Whether the mail journal of a state directory holds `text` (the mail was accepted, durably). */
export function journaled(state: string, text: string): boolean {
  try {
    return readFileSync(join(state, 'mail', 'mail.journal'), 'utf8').includes(text)
  } catch {
    return false
  }
}
