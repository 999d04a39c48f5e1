// Renders the state the server pushes. Everything from tools and sessions goes in as text
// (textContent, text nodes, setAttribute on data-* and title), never as HTML, and every text shown
// is `visible()` first: a tool, a model or a client controls most of it.

/**
 * The code points a renderer acts on or draws as nothing: C0 controls but tab and newline, DEL,
 * C1, the bidi marks, overrides and isolates, the zero-width and invisible ones, U+2028/U+2029 and
 * the tag characters. The same set as `visibleText` in packages/toolbox/src/text.ts (decision
 * 0013); the page cannot import the package, so a test holds the two equal.
 */
const CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control codes is what this regex is for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/gu

function escaped(char) {
  const code = char.codePointAt(0)
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/**
 * `text` as the page shows it: each of those code points as `\uXXXX` (`\u{e0041}` above the basic
 * plane), a carriage return before a newline kept, as toolvisor's own `visibleText` writes them.
 */
export function visible(text) {
  const value = String(text)
  return value.replace(CONTROLS, (char, offset) =>
    char === '\r' && value.charCodeAt(offset + 1) === 10 ? char : escaped(char),
  )
}

/**
 * An element with attributes (strings) and children (nodes, or strings made text). Text children
 * and the `title` tooltip are shown, so they are made visible; `data-*` values are ids the page
 * sends back to the server, never shown, and stay as they are.
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    node.setAttribute(name, name === 'title' ? visible(value) : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    node.append(typeof child === 'string' ? document.createTextNode(visible(child)) : child)
  }
  return node
}

/** `45 s`, `3 min 12 s`, `2 h 5 min`, `1 d 3 h`. */
export function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`
}

/** `812 B`, `1.2 KiB`, `3.4 MiB`. */
export function bytes(n) {
  if (n === undefined) return ''
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit += 1
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`
}

/** `code 0`, `signal SIGTERM`, with the reason when it is not a plain exit. */
export function exitText(exit) {
  if (!exit) return ''
  const how = exit.code !== null ? `code ${exit.code}` : exit.signal ? `signal ${exit.signal}` : 'no code'
  const why = exit.why ? `: ${exit.why}` : ''
  return exit.reason && exit.reason !== 'exit' ? `${how} (${exit.reason}${why})` : `${how}${why}`
}

/** The uptime cell's text: running for, or ran for. */
export function uptimeText(task, now) {
  return task.endedAt ? `ran ${duration(task.endedAt - task.startedAt)}` : duration(now - task.startedAt)
}

/** The optional columns a session shows only when one of its tasks has the figure. */
const OPTIONAL = {
  restarts: 'Restarts',
  memory: 'Memory',
  cpuMs: 'CPU',
  spillBytes: 'Spilled',
  netIn: 'Net in',
  netOut: 'Net out',
  netBlocked: 'Blocked',
  mail: 'Mail',
}

/** How an optional column shows its figure: memory in bytes, cpu time in seconds, others counted. */
function optionalText(key, n) {
  if (n === undefined) return ''
  if (key === 'memory' || key === 'spillBytes' || key === 'netIn' || key === 'netOut') return bytes(n)
  if (key === 'cpuMs') return `${(n / 1000).toFixed(n < 10_000 ? 2 : 0)} s`
  return String(n)
}

function columnsOf(session) {
  const shown = Object.keys(OPTIONAL).filter((key) => session.tasks.some((task) => task[key] !== undefined))
  const head = ['Handle', 'Kind', 'Tool', 'Status', 'Uptime', 'Exit', 'Events', 'stdout', 'stderr']
  return { shown, names: [...head, ...shown.map((key) => OPTIONAL[key]), ''] }
}

const count = (n) => (n === undefined ? '' : String(n))

function taskRow(task, view, now, optional) {
  const open = el(
    'button',
    { type: 'button', class: 'handle', 'data-open': task.id, title: 'open the tail' },
    task.id,
  )
  const status = el('span', { class: `status status-${task.status}`, title: task.detail }, task.status)
  const started = { class: 'uptime', 'data-started': task.startedAt, 'data-ended': task.endedAt }
  const cells = [
    el('td', {}, open),
    el('td', {}, task.kind),
    el(
      'td',
      { class: 'tool' },
      task.tool,
      task.label ? el('code', { class: 'label', title: task.label }, task.label) : '',
    ),
    el('td', {}, status, task.detail ? el('span', { class: 'detail' }, ` ${task.detail}`) : ''),
    el('td', started, uptimeText(task, now)),
    el('td', { class: 'exit' }, exitText(task.exit)),
    el('td', { class: 'num n-events' }, count(task.events)),
    el('td', { class: 'num' }, bytes(task.stdoutBytes)),
    el('td', { class: 'num' }, bytes(task.stderrBytes)),
    ...optional.map((key) => el('td', { class: `num n-${key}` }, optionalText(key, task[key]))),
  ]
  const stop =
    view.control && !task.exit
      ? el(
          'button',
          {
            type: 'button',
            class: 'danger small',
            'data-stop': task.id,
            'data-tool': task.tool,
            'data-label': task.label,
          },
          'Stop',
        )
      : ''
  return el(
    'tr',
    { 'data-task': task.id, 'data-status': task.status, class: 'task' },
    cells,
    el('td', {}, stop),
  )
}

function sessionHead(session, view, now) {
  const name = session.id === '' ? 'visible to every session' : session.id
  const facts = session.open ? [`${session.origin}`, `open ${duration(now - session.openedAt)}`] : ['closed']
  if (session.client !== undefined) facts.unshift(session.client)
  if (session.mail !== undefined) facts.push(`${session.mail} mail waiting`)
  const ending = view.control && session.open
  return el(
    'header',
    { class: 'session-head' },
    el('h2', {}, session.id === '' ? name : el('code', {}, name)),
    el('span', { class: 'facts' }, facts.join(' · ')),
    el('span', { class: 'spacer' }),
    ending ? el('button', { type: 'button', class: 'danger', 'data-end': session.id }, 'End session') : '',
  )
}

function sessionCard(session, view, now, selected) {
  const columns = columnsOf(session)
  const rows = session.tasks.map((task) => {
    const row = taskRow(task, view, now, columns.shown)
    if (selected && selected.session === session.id && selected.task === task.id)
      row.classList.add('selected')
    return row
  })
  const body = session.tasks.length
    ? el(
        'table',
        {},
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            columns.names.map((c) => el('th', {}, c)),
          ),
        ),
        el('tbody', {}, rows),
      )
    : el('p', { class: 'empty' }, 'Nothing running or kept.')
  const calls = session.calls?.length
    ? el(
        'p',
        { class: 'calls' },
        'recent calls: ',
        session.calls
          .slice()
          .reverse()
          .map((call) => `${call.tool} ${call.ms} ms${call.error ? ' (error)' : ''}`)
          .join(' · '),
      )
    : ''
  const omitted = session.omitted
    ? el('p', { class: 'omitted' }, `${session.omitted} older ended tasks not shown`)
    : ''
  return el(
    'article',
    { class: `session${session.open ? '' : ' closed'}`, 'data-session': session.id },
    sessionHead(session, view, now),
    body,
    omitted,
    calls,
  )
}

/** Replaces the sessions with the state's. */
export function renderSessions(root, view, now, selected) {
  const cards = view.sessions.map((session) => sessionCard(session, view, now, selected))
  if (cards.length === 0)
    cards.push(el('p', { class: 'empty' }, 'No session yet: sessions appear when an MCP client connects.'))
  if (view.closedOmitted)
    cards.push(el('p', { class: 'omitted' }, `${view.closedOmitted} older closed sessions not shown`))
  root.replaceChildren(...cards)
}

/** Replaces the list of operator actions (newest first). */
export function renderActions(root, actions) {
  const items = [...actions]
    .reverse()
    .map((action) =>
      el(
        'li',
        {},
        el('time', {}, new Date(action.at).toLocaleTimeString()),
        ` ${action.who}: ${action.what}`,
      ),
    )
  if (items.length === 0) items.push(el('li', { class: 'empty' }, 'None yet.'))
  root.replaceChildren(...items)
}

/** Moves every uptime on by the clock, between two pushes. */
export function tickUptimes(root, now) {
  for (const cell of root.querySelectorAll('td.uptime')) {
    if (cell.dataset.ended) continue
    cell.textContent = duration(now - Number(cell.dataset.started))
  }
}
