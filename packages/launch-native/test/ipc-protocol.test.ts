// The part of Node's IPC channel the fork server relies on, spoken by a stand-in that is neither
// Node nor toolvisor-spawnd (Python, over the raw descriptor), so that a Node version that changes
// it fails here, by name, instead of as launches that time out (decision 0107). What
// toolvisor-spawnd speaks (see the head of native/toolvisor-spawnd.c):
//   - the channel is the descriptor NODE_CHANNEL_FD names, a unix stream socket;
//   - with serialization "json" (the default) each message is one JSON value and a newline, both ways;
//   - {"cmd":"NODE_HANDLE","type":"net.Native","msg":M} with one descriptor (SCM_RIGHTS) reaches
//     `message` as M with a handle Node's `net.Socket({ handle })` reads from, and Node answers
//     {"cmd":"NODE_HANDLE_ACK"}.
import { spawn, spawnSync } from 'node:child_process'
import { Socket } from 'node:net'
import { within } from '@toolvisor/process-runtime/testing'
import { describe, expect, it } from 'vitest'

const STAND_IN = `
import os, socket, json, sys
channel = socket.socket(fileno=int(os.environ['NODE_CHANNEL_FD']))
seen = []
buffer = b''
def line():
    global buffer
    while b'\\n' not in buffer:
        chunk = channel.recv(4096)
        if not chunk:
            raise SystemExit('the channel closed before a line came')
        buffer += chunk
    text, _, buffer = buffer.partition(b'\\n')
    return text.decode()
# A plain message from Node: one JSON string on a line.
seen.append(line())
# A descriptor to Node: the read end of a pipe holding a known text.
r, w = os.pipe()
os.write(w, b'through the handle')
os.close(w)
message = json.dumps({'cmd': 'NODE_HANDLE', 'type': 'net.Native', 'msg': 'f 1 1 0'}) + '\\n'
socket.send_fds(channel, [message.encode()], [r])
os.close(r)
# Node's acknowledgement, then what Node sends after reading the handle.
seen.append(line())
seen.append(line())
print(json.dumps(seen))
`

/** What Node throws on a handle it cannot take: the test says why it failed instead. */
const ignore = () => {}

const hasPython = spawnSync('python3', ['-c', 'import socket; socket.send_fds']).status === 0

describe("Node's IPC channel, as the fork server speaks it", () => {
  it.skipIf(!hasPython)(
    'takes plain JSON lines, passes a net.Native descriptor as a readable handle, and acknowledges it',
    async () => {
      const child = spawn('python3', ['-c', STAND_IN], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
      let printed = ''
      child.stdout!.setEncoding('utf8').on('data', (text: string) => {
        printed += text
      })
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      const got = new Promise<{ message: unknown; handle: unknown }>((resolve) =>
        child.once('message', (message, handle) => resolve({ message, handle })),
      )
      const protocol = "Node's IPC handle protocol changed: the fork server (toolvisor-spawnd) relies on it"
      // Node drops a handle of a type it does not know (no message at all): bounded, and said so.
      child.on('error', () => {})
      process.on('uncaughtException', ignore)
      child.send('k 1')
      const answer = await within(got, 5000).finally(() => process.off('uncaughtException', ignore))
      if (answer === 'no answer') child.kill('SIGKILL')
      expect(answer, `${protocol}: no message with a handle within 5 s`).not.toBe('no answer')
      const { message, handle } = answer as Awaited<typeof got>
      expect(message, protocol).toBe('f 1 1 0')
      expect(handle, protocol).toBeTypeOf('object')
      const socket = new Socket({ handle, readable: true, writable: false } as ConstructorParameters<
        typeof Socket
      >[0])
      let read = ''
      socket.setEncoding('utf8').on('data', (text: string) => {
        read += text
      })
      await new Promise((resolve) => socket.once('end', resolve))
      expect(read, protocol).toBe('through the handle')
      child.send(`read ${read}`)
      expect(await exited).toBe(0)
      const [plain, ack, after] = JSON.parse(printed) as string[]
      expect(plain, protocol).toBe('"k 1"')
      expect(JSON.parse(ack!), protocol).toEqual({ cmd: 'NODE_HANDLE_ACK' })
      expect(after, protocol).toBe('"read through the handle"')
    },
  )
})
