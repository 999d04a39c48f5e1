import { describe, expect, it } from 'vitest'
import { type Answer, sharedAsk } from './asking.js'

describe('sharedAsk', () => {
  it('asks once for the same host and port while an answer is pending, and anew after', async () => {
    const asked: string[] = []
    const answers = new Map<string, (given: Answer) => void>()
    const ask = sharedAsk((host, port) => {
      asked.push(`${host}:${port}`)
      return new Promise<Answer>((resolve) => answers.set(`${host}:${port}`, resolve))
    })
    const first = ask('a.example', 443)
    const second = ask('a.example', 443)
    const other = ask('a.example', 80)
    await new Promise((resolve) => setImmediate(resolve))
    expect(asked).toEqual(['a.example:443', 'a.example:80'])
    answers.get('a.example:443')!('session')
    answers.get('a.example:80')!('once')
    expect([await first, await second, await other]).toEqual(['session', 'session', 'once'])
    const again = ask('a.example', 443)
    await new Promise((resolve) => setImmediate(resolve))
    expect(asked).toEqual(['a.example:443', 'a.example:80', 'a.example:443'])
    answers.get('a.example:443')!('deny')
    expect(await again).toBe('deny')
  })

  it('fails closed: a rejection or an answer outside the three is deny', async () => {
    expect(await sharedAsk(() => Promise.reject(new Error('gone')))('x', 1)).toBe('deny')
    expect(await sharedAsk(() => Promise.resolve('always' as Answer))('x', 1)).toBe('deny')
    expect(
      await sharedAsk(() => {
        throw new Error('sync')
      })('x', 1),
    ).toBe('deny')
  })
})
