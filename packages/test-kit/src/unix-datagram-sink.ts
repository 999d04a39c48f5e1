// Unix datagram sockets a test binds where a sandboxed tool might send, to see what reached them.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/** Unix datagram sockets bound at paths or abstract names that keep what reaches them: see {@link unixDatagramSink}. */
export interface UnixDatagramSink {
  /** What it listens at, as given: a path, or `@name` for an abstract socket. */
  readonly targets: readonly string[]
  /**
   * Returns (and forgets) every datagram queued so far, as `[target, text]`. A datagram sent to a
   * unix socket is in the receiver's queue when `sendto` returns, so once a tool has finished,
   * "nothing came" holds without sleeping.
   */
  drain(): Promise<Array<[string, string]>>
  /** Closes the sockets, removes the socket files and ends the listener (killed if it lingers). */
  close(): Promise<void>
}

// Node has no unix datagram socket: python3 holds them, told to drain by a line on stdin.
const LISTENER = `
import json, os, socket, sys
held = []
for target in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if target.startswith("@"):
        s.bind("\\0" + target[1:])
    else:
        s.bind(target)
        os.chmod(target, 0o777)
    s.setblocking(False)
    held.append((target, s))
print("ready", flush=True)
for line in sys.stdin:
    for target, s in held:
        while True:
            try:
                data = s.recv(65536)
            except BlockingIOError:
                break
            print(json.dumps([target, data.decode("latin-1")]), flush=True)
    print("drained", flush=True)
for target, s in held:
    if not target.startswith("@"):
        os.unlink(target)
`

const BOUND_MS = 5000

/**
 * Binds a unix datagram socket at each target (a path, made mode 0777 so any sandbox user may
 * send to it, or `@name` for an abstract one), as the attacker's review did with its `dgl2.py`
 * listeners. Needs `/usr/bin/python3`.
 */
export async function unixDatagramSink(targets: readonly string[]): Promise<UnixDatagramSink> {
  const child = spawn('/usr/bin/python3', ['-c', LISTENER, ...targets], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const lines = createInterface({ input: child.stdout })
  const waiting: Array<(line: string) => void> = []
  const queued: string[] = []
  lines.on('line', (line) => {
    const next = waiting.shift()
    if (next) next(line)
    else queued.push(line)
  })
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      const early = queued.shift()
      if (early !== undefined) return resolve(early)
      const timer = setTimeout(
        () => reject(new Error(`datagram sink: no answer in ${BOUND_MS} ms; ${stderr}`)),
        BOUND_MS,
      )
      waiting.push((line) => {
        clearTimeout(timer)
        resolve(line)
      })
      exited.then(() => reject(new Error(`datagram sink ended: ${stderr.trim()}`)))
    })
  const ready = await nextLine()
  if (ready !== 'ready') throw new Error(`datagram sink did not start: ${ready} ${stderr}`)
  return {
    targets,
    async drain() {
      child.stdin.write('drain\n')
      const got: Array<[string, string]> = []
      for (let line = await nextLine(); line !== 'drained'; line = await nextLine()) {
        got.push(JSON.parse(line) as [string, string])
      }
      return got
    },
    async close() {
      child.stdin.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS)
      await exited
      clearTimeout(timer)
    },
  }
}
