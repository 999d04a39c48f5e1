// pattern.mjs --bytes=N --line=L | --binary: writes N bytes to stdout as fast as the pipe takes
// them, from one pre-built block (so the producer costs next to nothing): lines of L bytes each
// (L - 1 printable bytes and a newline; L = 1 is empty lines), or, with --binary, pseudo-random
// bytes with no structure (newlines and invalid UTF-8 included).
const options = Object.fromEntries(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=')
    return [key, value ?? 'true']
  }),
)
const total = Number(options.bytes)
const line = Number(options.line ?? 0)
const binary = options.binary === 'true'
if (!Number.isInteger(total) || total < 0 || (!binary && (!Number.isInteger(line) || line < 1))) {
  process.stderr.write('usage: pattern.mjs --bytes=N (--line=L | --binary)\n')
  process.exit(2)
}
// A block of whole lines of at least 1 MiB (one line when a line is longer), or 1 MiB of noise.
const BLOCK = 1024 * 1024
let block
if (binary) {
  block = Buffer.allocUnsafe(BLOCK)
  let seed = 0x2545f491
  for (let i = 0; i < BLOCK; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0
    block[i] = seed >>> 24
  }
} else {
  const one = Buffer.alloc(line, 'x')
  one[line - 1] = 10
  block = Buffer.concat(Array.from({ length: Math.max(1, Math.ceil(BLOCK / line)) }, () => one))
}

let left = total
function next() {
  while (left > 0) {
    const buffer = left < block.length ? block.subarray(0, left) : block
    left -= buffer.length
    if (!process.stdout.write(buffer)) return process.stdout.once('drain', next)
  }
}
next()
