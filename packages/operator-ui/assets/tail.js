// The tail of one process: its events and stderr as they arrive (an EventSource on
// /ui/tail/<task>), and older ones paged back on demand (/ui/api/page, /ui/api/stderr).
import { bytes, el, exitText, visible } from '/ui/render.js'

/** Lines kept in the events list; older ones leave it (and come back with Older). */
const KEEP_EVENTS = 2000
/** Characters of stderr kept on screen. */
const KEEP_STDERR = 512 * 1024

const $ = (id) => document.getElementById(id)

export class TailView {
  /**
   * `post(path, body)` makes an action (the page's header set); `control` is true when serve runs
   * with --ui-control: a terminal task then takes the operator's keyboard.
   */
  constructor(onError, post) {
    this.onError = onError
    this.post = post
    this.control = false
    this.current = undefined
    /** Whether the terminal's data now comes from the operator (see `operatorInput`). */
    this.typed = operatorInput($('tail-terminal'))
    $('tail-close').addEventListener('click', () => this.close())
    $('tail-older').addEventListener('click', () => void this.older())
  }

  /** Opens the tail of `task` of `session` (closing the one open). */
  open(session, task, tool) {
    this.close()
    const query = `session=${encodeURIComponent(session)}`
    const source = new EventSource(`/ui/tail/${encodeURIComponent(task)}?${query}`)
    this.current = {
      session,
      task,
      tool,
      source,
      first: undefined,
      next: 0,
      total: 0,
      stderrFirst: undefined,
      stderrNext: 0,
    }
    $('tail').hidden = false
    $('tail-title').replaceChildren(
      el('code', {}, task),
      ` ${tool} · `,
      session === '' ? 'every session' : el('code', {}, session),
    )
    $('tail-events').replaceChildren()
    $('tail-stderr').replaceChildren()
    this.note('')
    $('tail-screen').hidden = true
    $('tail-terminal').replaceChildren()
    source.addEventListener('terminal', (message) => void this.terminal(JSON.parse(message.data)))
    source.addEventListener('events', (message) => this.events(JSON.parse(message.data)))
    source.addEventListener('stderr', (message) => this.stderr(JSON.parse(message.data)))
    source.addEventListener('end', (message) => this.end(JSON.parse(message.data)))
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED && this.current?.source === source && !this.current.ended)
        this.note('The tail closed: the task is gone, or the page was logged out.')
    })
    this.counts()
  }

  /** The task's row in the state, to show its status beside the title. */
  update(task) {
    if (!this.current || !task) return
    $('tail-status').className = `status status-${task.status}`
    $('tail-status').textContent = visible(task.exit ? `${task.status}: ${exitText(task.exit)}` : task.status)
  }

  close() {
    if (!this.current) return
    this.current.source.close()
    this.current.terminal?.dispose()
    this.current = undefined
    $('tail').hidden = true
  }

  /** Who is open: `{session, task}`. */
  get selected() {
    return this.current ? { session: this.current.session, task: this.current.task } : undefined
  }

  note(text) {
    $('tail-note').textContent = visible(text)
    $('tail-note').hidden = text === ''
  }

  /**
   * What a terminal task shows, as bytes: rendered by xterm.js (served from the package), sized as
   * its terminal, read-only. The first message makes the terminal; one that skipped resets it.
   */
  async terminal(message) {
    const tail = this.current
    if (!tail) return
    tail.screen ??= terminalView(message.columns, message.rows, this.control)
    const terminal = await tail.screen
    if (this.control && !tail.typing) {
      tail.typing = { queued: '', sending: false }
      terminal.onData((data) => {
        if (this.typed()) void this.type(tail, data)
      })
    }
    if (this.current !== tail) return
    tail.terminal = terminal
    if (terminal.cols !== message.columns || terminal.rows !== message.rows)
      terminal.resize(message.columns, message.rows)
    if (message.skipped) terminal.reset()
    terminal.write(Uint8Array.from(atob(message.data), (c) => c.charCodeAt(0)))
    const mode = this.control ? 'click it to type into the task' : 'read-only'
    $('tail-size').textContent = `${message.columns}x${message.rows} · ${mode}`
    const query = `task=${encodeURIComponent(tail.task)}&session=${encodeURIComponent(tail.session)}`
    $('tail-recording').href = `/ui/api/recording?${query}`
  }

  /**
   * Types what the operator's keyboard sent into the task's terminal, in order: one post at a
   * time, what came meanwhile queued and sent next (at most {@link KEYS_PER_POST} code units a post).
   */
  async type(tail, data) {
    const typing = tail.typing
    typing.queued += data
    if (typing.sending) return
    typing.sending = true
    try {
      while (typing.queued !== '' && this.current === tail) {
        // At most 4096 code units (the server's bound), never half of a surrogate pair.
        let end = Math.min(typing.queued.length, KEYS_PER_POST)
        const last = typing.queued.charCodeAt(end - 1)
        if (end < typing.queued.length && last >= 0xd800 && last <= 0xdbff) end--
        const next = typing.queued.slice(0, end)
        typing.queued = typing.queued.slice(end)
        const failed = await this.post('/ui/api/keys', { session: tail.session, task: tail.task, data: next })
        if (failed) typing.queued = ''
      }
    } finally {
      typing.sending = false
    }
  }

  events(run) {
    const tail = this.current
    const list = $('tail-events')
    if (run.skipped) {
      list.replaceChildren()
      tail.first = undefined
      this.note(`${run.skipped} events went by faster than this page reads; Older pages back through them.`)
    }
    const follow = atBottom(list)
    for (const line of run.events) list.append(eventLine(line))
    if (tail.first === undefined && run.events.length > 0) tail.first = run.events[0].seq
    while (list.childElementCount > KEEP_EVENTS) {
      list.firstElementChild.remove()
      tail.first = Number(list.firstElementChild.dataset.seq)
    }
    tail.next = run.next
    tail.total = run.total
    if (follow) list.scrollTop = list.scrollHeight
    this.counts()
  }

  stderr(run) {
    const tail = this.current
    const pre = $('tail-stderr')
    const follow = atBottom(pre)
    if (run.skipped) pre.append(el('span', { class: 'skipped' }, `\n… ${bytes(run.skipped)} not kept …\n`))
    pre.append(el('span', { 'data-from': run.from }, run.text))
    if (tail.stderrFirst === undefined) tail.stderrFirst = run.from
    while (pre.textContent.length > KEEP_STDERR && pre.childElementCount > 1) {
      pre.firstElementChild.remove()
      tail.stderrFirst = Number(pre.firstElementChild.dataset.from ?? tail.stderrFirst)
    }
    tail.stderrNext = run.next
    tail.stderrTotal = run.total
    if (follow) pre.scrollTop = pre.scrollHeight
    this.counts()
  }

  end(message) {
    this.current.ended = true
    this.current.source.close()
    this.note(`Ended: ${exitText(message.exit)}.`)
  }

  /** Pages back: the 100 events before the first shown, and 16 KiB of stderr before the first shown. */
  async older() {
    const tail = this.current
    if (!tail) return
    const query = `task=${encodeURIComponent(tail.task)}&session=${encodeURIComponent(tail.session)}`
    const first = tail.first ?? tail.next
    if (first > 0) {
      const offset = Math.max(0, first - 100)
      const run = await getJson(`/ui/api/page?${query}&offset=${offset}&max=${first - offset}`, this.onError)
      if (run && this.current === tail) {
        $('tail-events').prepend(...run.events.map(eventLine))
        if (run.events.length > 0) tail.first = run.events[0].seq
        if (run.elided) this.note(`${run.elided} events could not be read back.`)
      }
    }
    const from = tail.stderrFirst ?? tail.stderrNext
    if (from > 0) {
      const offset = Math.max(0, from - 16384)
      const run = await getJson(`/ui/api/stderr?${query}&offset=${offset}&max=${from - offset}`, this.onError)
      if (run && this.current === tail && run.text) {
        $('tail-stderr').prepend(el('span', { 'data-from': run.from }, run.text))
        tail.stderrFirst = run.from
      }
    }
    this.counts()
  }

  counts() {
    const tail = this.current
    if (!tail) return
    const shown = $('tail-events').childElementCount
    $('tail-count').textContent =
      `${shown} shown of ${tail.total}${tail.first > 0 ? ` (from #${tail.first})` : ''}`
    $('tail-bytes').textContent = tail.stderrTotal ? `${bytes(tail.stderrTotal)} in all` : ''
    $('tail-older').disabled = !((tail.first ?? tail.next) > 0 || (tail.stderrFirst ?? tail.stderrNext) > 0)
  }
}

function eventLine(line) {
  return el(
    'li',
    { 'data-seq': line.seq },
    el('span', { class: 'seq' }, `#${line.seq}`),
    el('code', {}, line.text),
    line.cut ? el('span', { class: 'cut' }, ` … (${line.cut} characters, cut)`) : '',
  )
}

function atBottom(node) {
  return node.scrollHeight - node.scrollTop - node.clientHeight < 24
}

async function getJson(url, onError) {
  const response = await fetch(url, { credentials: 'same-origin' })
  const body = await response.json().catch(() => ({}))
  if (!response.ok) {
    onError(body.error ?? `${url}: ${response.status}`)
    return undefined
  }
  return body
}

/**
 * An xterm.js terminal in the tail's screen box (loaded the first time one is needed): read-only,
 * or taking the keyboard under --ui-control.
 */
async function terminalView(columns, rows, control) {
  stampStyles()
  const { Terminal } = await import('/ui/xterm.mjs')
  const terminal = new Terminal({
    cols: columns,
    rows,
    disableStdin: !control,
    scrollback: 1000,
    convertEol: false,
  })
  $('tail-screen').hidden = false
  terminal.open($('tail-terminal'))
  return terminal
}

/** UTF-16 code units one post types at most (the server's bound, `POST /ui/api/keys`). */
const KEYS_PER_POST = 4096

/** How soon after the operator's own keystroke, paste or click the terminal's data is theirs. */
const INPUT_WINDOW_MS = 250

/**
 * Whether the terminal's data now comes from the operator: a key, a paste, a composition or a
 * click on it within {@link INPUT_WINDOW_MS}. xterm.js also answers a program's queries (cursor
 * position, device attributes) as data; those are not sent: the model's side does not answer
 * them either, so a program sees the same terminal whether a page watches or not, and two pages
 * watching do not answer twice.
 */
function operatorInput(element) {
  let last = -Infinity
  const mark = () => {
    last = performance.now()
  }
  for (const name of [
    'keydown',
    'keypress',
    'beforeinput',
    'input',
    'paste',
    'compositionend',
    'mousedown',
    'mouseup',
    'wheel',
  ])
    element.addEventListener(name, mark, { capture: true })
  return () => performance.now() - last < INPUT_WINDOW_MS
}

/**
 * xterm.js builds its cell styles as `<style>` elements; the page's policy lets in only those that
 * carry this answer's nonce, which the page's own script tag holds: every `<style>` made from now
 * on gets it, before it is inserted (the order a nonce needs).
 */
function stampStyles() {
  if (stampStyles.done) return
  stampStyles.done = true
  const nonce = document.querySelector('script[nonce]')?.nonce
  if (!nonce) return
  const create = Document.prototype.createElement
  Document.prototype.createElement = function (name, options) {
    const made = create.call(this, name, options)
    if (String(name).toLowerCase() === 'style') made.setAttribute('nonce', nonce)
    return made
  }
}
