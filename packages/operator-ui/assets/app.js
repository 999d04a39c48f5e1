// The operator page: the state stream (/ui/events) drawn as sessions and their tasks, a tail of
// the task clicked, and (when serve runs with --ui-control) stop and end, each confirmed first.
// No polling: the server pushes; the only timer here moves the uptimes on between two pushes.
import { renderActions, renderSessions, tickUptimes, visible } from '/ui/render.js'
import { TailView } from '/ui/tail.js'

/** The header every action carries: the server refuses an action without it (no form can set it). */
const ACTION_HEADER = 'x-toolvisor-ui'

const $ = (id) => document.getElementById(id)
let view
/** Server clock minus this clock, from the last push. */
let skew = 0
const now = () => Date.now() + skew

function notice(text) {
  $('notice').textContent = visible(text)
  $('notice').hidden = text === ''
}

const tail = new TailView(notice, (path, body) => post(path, body))

function draw() {
  if (!view) return
  renderSessions($('sessions'), view, now(), tail.selected)
  renderActions($('actions'), view.actions)
  tail.control = view.control
  const mode = $('mode')
  mode.textContent = view.control ? 'control' : 'read-only'
  mode.dataset.mode = view.control ? 'control' : 'read-only'
  // Read-only says how to act: the operator who wants Stop and End looks here first.
  $('mode-hint').textContent = view.control ? '' : 'serve --ui-control adds Stop, End session and typing'
  const selected = tail.selected
  if (selected) {
    const session = view.sessions.find((s) => s.id === selected.session)
    tail.update(session?.tasks.find((t) => t.id === selected.task))
  }
}

function connect() {
  const source = new EventSource('/ui/events')
  const link = (state, text) => {
    $('link').dataset.state = state
    $('link').textContent = text
  }
  source.addEventListener('open', () => link('live', 'live'))
  source.addEventListener('state', (message) => {
    view = JSON.parse(message.data)
    skew = view.now - Date.now()
    link('live', 'live')
    draw()
  })
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED)
      link('closed', 'disconnected: reload the page to log in again')
    else link('connecting', 'reconnecting')
  })
}

/** Asks first, in the page's own dialog; resolves true when the operator confirmed. */
function confirmed(text, action) {
  const dialog = $('confirm')
  $('confirm-text').textContent = visible(text)
  $('confirm-ok').textContent = visible(action)
  dialog.returnValue = ''
  dialog.showModal()
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true })
  })
}

async function post(path, body) {
  const response = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', [ACTION_HEADER]: '1' },
    body: JSON.stringify(body),
  })
  const answer = await response.json().catch(() => ({}))
  if (!response.ok) notice(answer.error ?? `${path}: ${response.status}`)
  else notice('')
  return !response.ok
}

async function onClick(event) {
  const target = event.target.closest('button')
  if (!target) return
  const card = target.closest('[data-session]')
  const session = card?.dataset.session ?? ''
  const where = session === '' ? 'visible to every session' : `of session ${session}`
  if (target.dataset.open !== undefined) {
    const row = target.closest('tr')
    tail.open(session, target.dataset.open, row.querySelector('.tool').textContent)
    draw()
  } else if (target.dataset.stop !== undefined) {
    const task = target.dataset.stop
    // The label (a background shell's command) says which process this is; the dialog shows it escaped.
    const label = target.dataset.label === undefined ? '' : `: ${target.dataset.label}`
    const text = `Stop ${task} (${target.dataset.tool}${label}) ${where}? It gets its declared cancel, as when the model stops it.`
    if (await confirmed(text, `Stop ${task}`)) await post('/ui/api/stop', { session, task })
  } else if (target.dataset.end !== undefined) {
    const text = `End session ${session}? Every process it owns is stopped, and its client loses it.`
    if (await confirmed(text, 'End session')) await post('/ui/api/end', { session })
  }
}

$('sessions').addEventListener('click', (event) => void onClick(event))
$('tail-close').addEventListener('click', draw)
setInterval(() => {
  tickUptimes($('sessions'), now())
  $('clock').textContent = new Date(now()).toLocaleTimeString()
}, 1000)
connect()
