import { accessSync, constants as fs } from 'node:fs'
import { ForkServer } from './fork-server.js'

const serving = new Map<string, ForkServer>()

/** This process's fork server for `binary`, started when needed; undefined: `binary` cannot run. */
export function forkServer(binary: string): ForkServer | undefined {
  const running = serving.get(binary)
  if (running?.alive) return running
  try {
    accessSync(binary, fs.X_OK)
  } catch {
    return undefined
  }
  const server = new ForkServer(binary)
  serving.set(binary, server)
  return server
}
