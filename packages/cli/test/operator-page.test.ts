// The operator page in a real browser: headless Chromium from Debian's packages, driven by
// playwright-core (no browser download). `.ci/run` installs chromium when it runs as root.

import { createHash, randomUUID } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '@toolvisor/process-runtime/testing'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { tagged, tempDir } from './helpers.js'
import { connect, serve, textOf } from './serve-helpers.js'

const CHROMIUM = process.env.TOOLVISOR_CHROMIUM ?? '/usr/bin/chromium'
const present = existsSync(CHROMIUM)
const title = present
  ? 'the operator page in headless Chromium'
  : `the operator page in headless Chromium (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium, as .ci/run does when root, or set TOOLVISOR_CHROMIUM)`

let browser: { instance: Browser; tag: string } | undefined
afterEach(async () => {
  if (browser === undefined) return
  const { instance, tag } = browser
  browser = undefined
  await instance.close()
  expect(await eventually(() => tagged(tag).length === 0, 5000), 'Chromium processes left').toBe(true)
})

async function launch(): Promise<Browser> {
  const tag = randomUUID()
  const instance = await chromium.launch({
    executablePath: CHROMIUM,
    // Chromium refuses to run as root with its own sandbox on; the page is ours.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
    env: { ...process.env, TV_TEST_TAG: tag },
  })
  browser = { instance, tag }
  return instance
}

/** Starts `counter` in a client's session; returns its task id. */
async function counter(client: Awaited<ReturnType<typeof connect>>['client'], to: number, everyMs: number) {
  const result = await client.callTool({ name: 'counter', arguments: { to, 'every-ms': everyMs } })
  return JSON.parse(textOf(result)).task as string
}

/** What the functions run in the page use of the browser (this file is checked without the DOM library). */
interface PageNode {
  readonly lastElementChild: PageNode | null
  readonly textContent: string | null
  querySelector(selector: string): PageNode | null
}
interface BrowserGlobals {
  readonly document: PageNode & { getElementById(id: string): PageNode | null }
  readonly MutationObserver: new (
    callback: () => void,
  ) => { observe(node: PageNode, options: { childList: boolean }): void; disconnect(): void }
}

/** Resolves with how long after it was printed (its `at`) the next event showed in the tail. */
function nextEventLatency(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const { document, MutationObserver } = globalThis as unknown as BrowserGlobals
        const list = document.getElementById('tail-events')!
        const observer = new MutationObserver(() => {
          const text = list.lastElementChild?.querySelector('code')?.textContent ?? '{}'
          observer.disconnect()
          resolve(Date.now() - Date.parse(JSON.parse(text).at))
        })
        observer.observe(list, { childList: true })
      }),
  )
}

describe.skipIf(!present)(title, () => {
  it('logs in through the form, shows two sessions and their processes live, tails one within 1 s, stops one with --ui-control', async () => {
    const server = await serve(['--ui-control'], undefined, {}, { config: { bash: {} } })
    const alpha = await connect(server.url, server.token, undefined, 'alpha')
    const beta = await connect(server.url, server.token, undefined, 'beta')
    const ticking = await counter(alpha.client, 100_000, 300)
    const done = await counter(alpha.client, 300, 1)
    const slow = await counter(beta.client, 100_000, 1000)
    const fast = await counter(beta.client, 100_000, 100)
    // A service in one session, a background shell in the other.
    const log = join(tempDir('tv-ui-log-'), 'app.log')
    writeFileSync(log, '')
    const started = await alpha.client.callTool({
      name: 'log_watcher',
      arguments: { file: log, pattern: 'ERROR' },
    })
    const service = JSON.parse(textOf(started)).process as string
    const shell = await beta.client.callTool({
      name: 'bash',
      arguments: {
        command: 'for i in $(seq 1 100000); do echo "deploy step $i"; sleep 0.5; done',
        description: 'a long deploy',
        run_in_background: true,
      },
    })
    const background = /^started background task (\S+)/.exec(textOf(shell))![1]!
    const { page, problems, watch } = await watchedPage()
    // What the page asks the server for: no polling, one state stream.
    const requests: string[] = []
    page.on('request', (request) => requests.push(new URL(request.url()).pathname))
    const address = server.url.replace(/\/mcp$/, '/ui')
    expect((await page.goto(address))!.status()).toBe(401)
    await page.fill('input[name=token]', server.token)
    await Promise.all([page.waitForURL(address), page.click('button[type=submit]')])
    watch()
    const row = (session: string, task: string) =>
      page.locator(`[data-session="${session}"] tr[data-task="${task}"]`)
    for (const [session, task] of [
      ['alpha', ticking],
      ['alpha', done],
      ['alpha', service],
      ['beta', slow],
      ['beta', fast],
      ['beta', background],
    ] as const)
      await row(session, task).waitFor()
    expect(await row('alpha', service).locator('td').nth(1).textContent()).toBe('service')
    expect(await row('beta', background).getAttribute('data-status')).toBe('running')
    expect(await page.locator('#mode').textContent()).toBe('control')
    await page.locator(`[data-session="alpha"] tr[data-task="${done}"][data-status="exited"]`).waitFor()
    expect(await row('alpha', done).locator('td.exit').textContent()).toBe('code 0')
    // Live: the counters move without a reload.
    const events = async () => Number(await row('beta', fast).locator('td.n-events').textContent())
    const before = await events()
    await page.waitForFunction(
      ([selector, n]) =>
        Number(
          (globalThis as unknown as BrowserGlobals).document.querySelector(selector as string)?.textContent,
        ) > (n as number),
      [`[data-session="beta"] tr[data-task="${fast}"] td.n-events`, before] as const,
    )
    // A click opens the tail; the next event shows within a second of being printed.
    await row('alpha', ticking).locator('button[data-open]').click()
    await page.locator('#tail-events li').first().waitFor()
    for (let i = 0; i < 3; i++) expect(await nextEventLatency(page)).toBeLessThan(1000)
    // A finished one's tail: its last 100 events and its end; Older pages back through the rest.
    await row('alpha', done).locator('button[data-open]').click()
    await page.locator('#tail-note', { hasText: 'Ended: code 0.' }).waitFor()
    const firstSeq = () => page.locator('#tail-events li').first().getAttribute('data-seq')
    expect([await firstSeq(), await page.locator('#tail-events li').count()]).toEqual(['200', 100])
    await page.locator('#tail-older').click()
    await page.locator('#tail-events li[data-seq="100"]').waitFor()
    expect([await firstSeq(), await page.locator('#tail-events li').count()]).toEqual(['100', 200])
    // Stop one, confirmed in the page's dialog: it ends with its declared cancel (counter's
    // SIGTERM handler, set before its first event, exits 143).
    await row('beta', slow)
      .locator('td.n-events', { hasText: /^[1-9]/ })
      .waitFor()
    await row('beta', slow).locator('button[data-stop]').click()
    // The dialog quotes what it runs (its label: the stream's arguments).
    expect(await page.locator('#confirm-text').textContent()).toContain(
      `Stop ${slow} (counter: run --to 100000 --every-ms 1000) of session beta?`,
    )
    await page.locator('#confirm-ok').click()
    await page.locator(`[data-session="beta"] tr[data-task="${slow}"][data-status="exited"]`).waitFor()
    expect(await row('beta', slow).locator('td.exit').textContent()).toBe('code 143 (cancelled)')
    const action = new RegExp(
      `login 1 \\(127\\.0\\.0\\.1\\): stop ${slow} \\(counter\\) of session beta: ended \\(code 143\\)$`,
    )
    await page.locator('#actions li', { hasText: action }).waitFor()
    expect(server.stderr()).toMatch(
      new RegExp(
        `operator page: login 1 \\(127\\.0\\.0\\.1\\) asked to stop ${slow} \\(counter\\) of session beta at \\d{4}-`,
      ),
    )
    // Another tail replaces the one open.
    await row('beta', fast).locator('button[data-open]').click()
    await page.locator('#tail-title', { hasText: `${fast} counter` }).waitFor()
    await page.locator('#tail-events li').nth(20).waitFor()
    // docs/operator-page.png is this screenshot (TOOLVISOR_SCREENSHOT=docs/operator-page.png).
    if (process.env.TOOLVISOR_SCREENSHOT) await page.screenshot({ path: process.env.TOOLVISOR_SCREENSHOT })
    // End a session, confirmed: what it owned stops; it shows as closed.
    await page.locator('[data-session="alpha"] button[data-end]').click()
    await page.locator('#confirm-ok').click()
    await page
      .locator(`[data-session="alpha"].closed tr[data-task="${ticking}"][data-status="exited"]`)
      .waitFor()
    expect(problems).toEqual([])
    expect(requests.filter((path) => path === '/ui/events')).toEqual(['/ui/events'])
    const tails = requests.filter((path) => path.startsWith('/ui/tail/'))
    expect(tails).toEqual([`/ui/tail/${ticking}`, `/ui/tail/${done}`, `/ui/tail/${fast}`])
    expect(requests.filter((path) => path.startsWith('/ui/api/'))).toEqual([
      '/ui/api/page',
      '/ui/api/stop',
      '/ui/api/end',
    ])
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 90_000)
})

/**
 * A new page, and every error or warning it logs once `watch()` was called (a CSP violation
 * would be one; the login form's 401 before it is expected), and every error it throws.
 */
async function watchedPage() {
  const page = await (await launch()).newPage({ viewport: { width: 1440, height: 900 } })
  const problems: string[] = []
  let watching = false
  page.on('console', (message) => {
    if (watching && (message.type() === 'error' || message.type() === 'warning'))
      problems.push(`${message.text()} (${message.location().url})`)
  })
  page.on('pageerror', (error) => problems.push(error.message))
  return {
    page,
    problems,
    watch: () => {
      watching = true
    },
  }
}

/** A page logged in to `server`, its console problems collected from then on. */
async function loggedInPage(server: { url: string; token: string }) {
  const { page, problems, watch } = await watchedPage()
  const address = server.url.replace(/\/mcp$/, '/ui')
  await page.goto(address)
  await page.fill('input[name=token]', server.token)
  await Promise.all([page.waitForURL(address), page.click('button[type=submit]')])
  watch()
  return { page, problems }
}

/** Waits until the page's terminal shows `text`. */
async function terminalShows(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (wanted) => {
      const { document } = globalThis as unknown as BrowserGlobals
      return document.querySelector('#tail-terminal .xterm-rows')?.textContent?.includes(wanted) === true
    },
    text,
    { timeout: 10_000 },
  )
}

describe.skipIf(!present)(`${title}: a terminal task`, () => {
  const script =
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template
    'printf "\\033[6n"; printf "\\033]0;a title\\007\\033[1;32mgreen\\033[0m plain\\n"; read -r -p "name? " n; echo "hi $n"; stty -icanon; read -r -p "again? " m; echo; echo "then ${#m}"; printf %s "$m" | sha256sum; sleep 600'

  /** `serve` with `flags`, the script run by session gamma as a tty background task, its tail open in a page. */
  async function openTerminalTask(flags: string[]) {
    const server = await serve(flags, undefined, {}, { config: { bash: {} } })
    const { client } = await connect(server.url, server.token, undefined, 'gamma')
    const shell = await client.callTool({
      name: 'bash',
      arguments: { command: script, description: 'asks', tty: true, run_in_background: true },
    })
    const task = /^started background task (\S+)/.exec(textOf(shell))![1]!
    const { page, problems } = await loggedInPage(server)
    await page.locator(`[data-session="gamma"] tr[data-task="${task}"] button[data-open]`).click()
    return { server, client, task, page, problems }
  }

  it('shows a bash command run with tty live as a terminal (xterm.js from the package), under the page CSP; read-only, typing goes nowhere', async () => {
    const { client, task, page, problems } = await openTerminalTask([])
    const keyPosts: string[] = []
    page.on('request', (request) => {
      if (request.url().includes('/ui/api/keys')) keyPosts.push(request.url())
    })
    // xterm.js renders its rows as DOM (its default renderer): the screen as the terminal shows it.
    const rows = page.locator('#tail-terminal .xterm-rows > div')
    await terminalShows(page, 'name?')
    expect((await rows.nth(0).textContent())?.trimEnd()).toBe('green plain')
    expect((await rows.nth(1).textContent())?.trimEnd()).toBe('name?')
    expect(await page.locator('#tail-size').textContent()).toBe('80x24 · read-only')
    // The colour came through as the terminal's, not as escape codes.
    expect(await rows.nth(0).locator('span').first().getAttribute('class')).toMatch(/xterm-fg-10|xterm-bold/)
    // The operator types on a read-only page: nothing is sent.
    await page.locator('#tail-terminal').click()
    await page.keyboard.type('zzz')
    await page.keyboard.press('Enter')
    // Typed by the model afterwards: the page follows live, and only the model's answer arrived.
    await client.callTool({ name: 'write_stdin', arguments: { task_id: task, text: 'ada', keys: ['Enter'] } })
    await terminalShows(page, 'hi ada')
    expect(await page.locator('#tail-terminal .xterm-rows').textContent()).not.toContain('zzz')
    expect(keyPosts).toEqual([])
    // Its recording, from the page's link: asciicast v2, what it showed as it wrote it.
    const href = await page.locator('#tail-recording').getAttribute('href')
    const recording = await page.request.get(new URL(href!, page.url()).href)
    expect(recording.status()).toBe(200)
    const [header, ...lines] = (await recording.text()).trimEnd().split('\n')
    expect(JSON.parse(header!)).toMatchObject({
      version: 2,
      width: 80,
      height: 24,
      env: { TERM: 'xterm-256color' },
    })
    expect(lines.map((line) => JSON.parse(line)[2]).join('')).toContain('\u001b[1;32mgreen\u001b[0m plain')
    expect(problems).toEqual([])
    await client.callTool({ name: 'bash_kill', arguments: { task_id: task } })
  })

  it('with --ui-control, the operator types into it from the page: the program and the model see it, the log says who', async () => {
    const { server, client, task, page, problems } = await openTerminalTask(['--ui-control'])
    await terminalShows(page, 'name?')
    expect(await page.locator('#tail-size').textContent()).toBe('80x24 · click it to type into the task')
    // The program asked the terminal where its cursor is; the page's xterm.js answers such
    // queries, but only what the operator types goes to the program (checked below: 'hi grace').
    await page.locator('#tail-terminal').click()
    await page.keyboard.type('grace')
    await page.keyboard.press('Enter')
    await terminalShows(page, 'hi grace')
    // Pasted at once, past one post's bound: it arrives whole and in order (the program reads it
    // with the line discipline's editing off, whose line holds at most 4095 characters).
    const long = Array.from({ length: 1000 }, (_, i) => String(i).padStart(5, '0')).join('')
    await page.keyboard.insertText(long)
    await page.keyboard.press('Enter')
    await terminalShows(page, 'then 5000')
    await terminalShows(page, createHash('sha256').update(long).digest('hex'))
    const read = await client.callTool({ name: 'bash_output', arguments: { task_id: task } })
    expect(textOf(read)).toContain('hi grace')
    expect(textOf(read)).toContain(`again? ${long}`)
    expect(server.stderr()).toMatch(
      new RegExp(`operator page: .* began to type into ${task} \\(bash\\) of session gamma`),
    )
    expect(server.stderr()).not.toContain('grace')
    expect(problems).toEqual([])
    await client.callTool({ name: 'bash_kill', arguments: { task_id: task } })
  })
})
