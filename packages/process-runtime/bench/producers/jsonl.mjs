// jsonl.mjs COUNT [PAD]: writes COUNT small JSON lines to stdout as fast as the pipe takes them,
// from pre-built buffers (so the producer costs next to nothing). PAD pads each line's `msg`.
// jsonl.mjs --bytes=N [PAD]: writes whole lines until at least N bytes are out.
const [what, padArg] = process.argv.slice(2)
const pad = Number(padArg ?? 0)
const byBytes = what?.startsWith('--bytes=') === true
const limit = Number(byBytes ? what.slice('--bytes='.length) : what)
if (!Number.isInteger(limit) || limit < 0 || !Number.isInteger(pad) || pad < 0) {
  process.stderr.write('usage: jsonl.mjs COUNT [PAD] | jsonl.mjs --bytes=N [PAD]\n')
  process.exit(2)
}
const BLOCK_LINES = 4096
const msg = `event${'x'.repeat(pad)}`
const ends = [] // ends[i]: bytes of the block's first i + 1 lines
const lines = []
let size = 0
for (let i = 0; i < BLOCK_LINES; i++) {
  const line = `${JSON.stringify({ n: i, level: 'info', msg })}\n`
  lines.push(line)
  size += Buffer.byteLength(line)
  ends.push(size)
}
const block = Buffer.from(lines.join(''))

let left = limit // lines, or bytes with --bytes
function next() {
  while (left > 0) {
    let buffer = block
    if (byBytes) {
      if (left < block.length)
        buffer = block.subarray(
          0,
          ends.find((end) => end >= left),
        )
      left -= buffer.length
    } else {
      const n = Math.min(left, BLOCK_LINES)
      if (n < BLOCK_LINES) buffer = block.subarray(0, ends[n - 1])
      left -= n
    }
    if (!process.stdout.write(buffer)) return process.stdout.once('drain', next)
  }
}
next()
