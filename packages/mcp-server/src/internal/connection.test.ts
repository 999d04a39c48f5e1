import type { TaskRegistry } from '@toolvisor/tasks'
import { createToolRegistry } from '@toolvisor/toolbox'
import { describe, expect, it } from 'vitest'
import { connectionServer } from './connection.js'
import { TaskAnswers } from './tasks.js'

describe('connectionServer, by era', () => {
  it('declares the 2025 tasks to a 2025 client only, whatever the options hold', () => {
    // Nothing is read from the registry while the server is built; a stand-in will do.
    const tasks = {} as TaskRegistry
    const options = { name: 't', version: '1', tasks, log: () => {} }
    const capabilities = (era: 'legacy' | 'modern') =>
      connectionServer(createToolRegistry(), options, new TaskAnswers(), era).server.getCapabilities()
    expect(capabilities('legacy').tasks).toBeDefined()
    expect(capabilities('modern').tasks).toBeUndefined()
    expect(capabilities('modern').tools).toEqual(capabilities('legacy').tools)
  })
})
