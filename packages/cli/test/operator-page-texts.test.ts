// The operator page shows what tools and the model control as visible text (issue 26, point 2): a
// background bash command whose label, stdout and stderr carry ESC, a bidi override and a
// zero-width space, in headless Chromium (as operator-page.test.ts drives it). Nothing of it may
// reach the page raw: not a cell, not a tooltip, not the tail, not the Stop confirmation.
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { eventually } from '@toolvisor/process-runtime/testing'
import { type Browser, chromium } from 'playwright-core'
import { afterEach, describe, expect, it } from 'vitest'
import { tagged } from './helpers.js'
import { connect, serve, textOf } from './serve-helpers.js'

const CHROMIUM = process.env.TOOLVISOR_CHROMIUM ?? '/usr/bin/chromium'
const present = existsSync(CHROMIUM)
const title = present
  ? 'the operator page escapes tool- and model-controlled text (headless Chromium)'
  : `the operator page escapes tool- and model-controlled text (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium, or set TOOLVISOR_CHROMIUM)`

/** The characters the page must never show raw, and how each is shown instead. */
const RAW = ['\u001b', '\u202e', '\u200b']

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

/** Fails when `text` holds any of the raw characters. */
function expectVisible(text: string | null, where: string): void {
  for (const raw of RAW)
    expect(text ?? '', `${where} holds U+${raw.codePointAt(0)!.toString(16)} raw`).not.toContain(raw)
}

describe.skipIf(!present)(title, () => {
  it("a bash command's label, its stdout and stderr, and the Stop confirmation show \\u001b, \\u202e, \\u200b", async () => {
    const server = await serve(['--ui-control'], undefined, {}, { config: { bash: {} } })
    const alpha = await connect(server.url, server.token, undefined, 'alpha')
    const command =
      "printf 'out \\342\\200\\256evil\\033[2K\\n'; printf 'err \\342\\200\\256evil\\033[31m\\n' >&2; sleep 600 # \u202eexe.txt\u001b[2K zero\u200bwidth"
    const shell = await alpha.client.callTool({
      name: 'bash',
      arguments: { command, description: 'a hostile label', run_in_background: true },
    })
    const task = /^started background task (\S+)/.exec(textOf(shell))![1]!
    const page = await (await launch()).newPage({ viewport: { width: 1440, height: 900 } })
    const address = server.url.replace(/\/mcp$/, '/ui')
    await page.goto(address)
    await page.fill('input[name=token]', server.token)
    await Promise.all([page.waitForURL(address), page.click('button[type=submit]')])
    const row = page.locator(`[data-session="alpha"] tr[data-task="${task}"]`)
    await row.waitFor()
    const label = row.locator('code.label')
    expectVisible(await label.textContent(), 'the label')
    expectVisible(await label.getAttribute('title'), "the label's tooltip")
    expect(await label.textContent()).toContain('# \\u202eexe.txt\\u001b[2K zero\\u200bwidth')
    expectVisible(await page.locator('#sessions').textContent(), 'the sessions')
    // The tail: stdout events and stderr as the command printed them.
    await row.locator('button[data-open]').click()
    await page.locator('#tail-stderr', { hasText: 'err' }).waitFor()
    await page.locator('#tail-events li').first().waitFor()
    expectVisible(await page.locator('#tail-stderr').textContent(), 'the stderr tail')
    expect(await page.locator('#tail-stderr').textContent()).toContain('err \\u202eevil\\u001b[31m')
    expectVisible(await page.locator('#tail-events').textContent(), 'the events tail')
    expect(await page.locator('#tail-events').textContent()).toContain('\\u202eevil')
    expectVisible(await page.locator('#tail-title').textContent(), "the tail's title")
    // The Stop confirmation quotes the task, its tool and its session; cancelled here.
    await row.locator('button[data-stop]').click()
    const confirm = await page.locator('#confirm-text').textContent()
    expectVisible(confirm, 'the Stop confirmation')
    expect(confirm).toContain(`Stop ${task} (bash: printf`)
    expect(confirm).toContain('\\u202eexe.txt')
    await page.keyboard.press('Escape')
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)
  }, 90_000)
})
