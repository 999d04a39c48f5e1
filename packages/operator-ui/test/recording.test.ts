// A terminal task's recording (asciicast v2, kept by the runtime in its spill directory) as a
// download from the page: as its owner only, a terminal task only.
import { eventually } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'
import { setup } from './helpers.js'

describe('GET /ui/api/recording', () => {
  it("sends a terminal task's recording as asciicast, to its owner; refuses other tasks with why", async () => {
    const { base, bearer, sessions, start, startOnTerminal, tasks } = await setup()
    sessions.open({ id: 'alpha' })
    const task = startOnTerminal('alpha', 'printf "\\033[1mshown\\033[0m\\n"; sleep 30')
    const piped = start('alpha', 'sleep 30')
    const get = (query: string) => fetch(`${base}/ui/api/recording?${query}`, { headers: bearer })
    const process = tasks.process(task.id, 'alpha')
    expect(await eventually(() => process.output.counters().stdoutBytes > 0)).toBe(true)
    // Written within 50 ms of quiet: asked again until it holds what was shown.
    let text = ''
    for (const deadline = Date.now() + 5000; !text.includes('shown') && Date.now() < deadline; ) {
      const response = await get(`task=${task.id}&session=alpha`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/x-asciicast')
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="${task.id}.cast"`)
      expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
      text = await response.text()
    }
    const [header, ...events] = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(header).toMatchObject({ version: 2, width: 80, height: 24 })
    expect(events[0]).toEqual([expect.any(Number), 'o', '\u001b[1mshown\u001b[0m\r\n'])
    const foreign = await get(`task=${task.id}&session=beta`)
    expect(foreign.status).toBe(404)
    const notTerminal = await get(`task=${piped.id}&session=alpha`)
    expect(notTerminal.status).toBe(409)
    expect(await notTerminal.json()).toEqual({
      error: `${piped.id} (sh) does not run on a terminal: it has no recording`,
    })
  })
})
