import { describe, expect, it } from 'vitest'
import { recoverId } from './recover-id.js'

describe('recoverId', () => {
  it.each([
    ['first', '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{', 'x"}}}', 7],
    ['first, after the method', '{ "method" : "tools/call" , "id" : "a\\"b", "params":{', '"}}}', 'a"b'],
    ['first of all', '{"id":-3,"jsonrpc":"2.0"', '}', -3],
    ['last (the SDK client)', '{"method":"tools/call","params":{"x":"', 'yy"}},"jsonrpc":"2.0","id":12}', 12],
    ['last, a string', '{"method":"m","params":{"x":"', '"},"id":"req-1" }\r', 'req-1'],
    ['in the middle', '{"params":{"x":"', '"},"id":4,"method":"m","jsonrpc":"2.0"}', null],
    ['nested at the end', '{"method":"m","params":{"x":"', '","id":5}}', null],
    ['beyond 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"method":"m"', '}', null],
    ['a float', '{"jsonrpc":"2.0","id":1.5,"method":"m"', '}', null],
    ['not JSON', 'zzzz', 'zzzz', null],
  ])('%s', (_what, head, tail, id) => {
    expect(recoverId(head, tail)).toBe(id)
  })
})
