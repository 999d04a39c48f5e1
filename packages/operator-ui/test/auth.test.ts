import { readdirSync, readFileSync } from 'node:fs'
import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import { ASSETS_DIR } from '../src/assets.js'
import { tokenFileFor } from '../src/http.js'
import { CSP } from '../src/index.js'
import { setup } from './helpers.js'

/** Every path of the page, as a browser or a script would ask for it. */
const PATHS: ReadonlyArray<readonly [string, string]> = [
  ['GET', '/ui'],
  ['GET', '/ui/'],
  ['GET', '/ui/login'],
  ['GET', '/ui/index.html'],
  ['GET', '/ui/app.js'],
  ['GET', '/ui/render.js'],
  ['GET', '/ui/tail.js'],
  ['GET', '/ui/style.css'],
  ['GET', '/ui/favicon.svg'],
  ['GET', '/ui/events'],
  ['GET', '/ui/tail/t1?session=a'],
  ['GET', '/ui/api/page?task=t1&session=a'],
  ['GET', '/ui/api/stderr?task=t1&session=a'],
  ['GET', '/ui/api/recording?task=t1&session=a'],
  ['GET', '/ui/no-such-file'],
  ['HEAD', '/ui/app.js'],
  ['POST', '/ui/api/stop'],
  ['POST', '/ui/api/end'],
  ['POST', '/ui/api/keys'],
  ['POST', '/ui/logout'],
]

function expectStrictHeaders(response: Response, what: string, page = false): void {
  const policy = response.headers.get('content-security-policy')
  // The page itself (200) adds one nonce for the styles its terminal view builds, nothing else.
  if (page)
    expect(policy, what).toBe(CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonceOf(policy)}'`))
  else expect(policy, what).toBe(CSP)
  expect(response.headers.get('x-content-type-options'), what).toBe('nosniff')
  expect(response.headers.get('referrer-policy'), what).toBe('same-origin')
}

/** The nonce of a page's policy (16 random bytes, base64), or the test fails. */
function nonceOf(policy: string | null): string {
  const nonce = /'nonce-([A-Za-z0-9+/]{22}==)'/.exec(policy ?? '')?.[1]
  expect(nonce, policy ?? 'no policy').toBeDefined()
  return nonce!
}

/** The cookie a login through the form sets, as `name=value`. */
async function logIn(base: string, token: string): Promise<{ status: number; cookie: string; raw: string }> {
  const response = await fetch(`${base}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  })
  const raw = response.headers.get('set-cookie') ?? ''
  return { status: response.status, cookie: raw.split(';')[0]!, raw }
}

describe('the operator page without the token', () => {
  it('answers 401 to every page, asset, event stream and action, with a strict CSP on each', async () => {
    const { base, start, sessions } = await setup({ control: true })
    sessions.open({ id: 'a' })
    start('a', 'while :; do echo "{}"; sleep 1; done')
    const forged = { cookie: `toolvisor_ui=${'A'.repeat(43)}` }
    const wrong = { authorization: `Bearer ${'x'.repeat(48)}` }
    for (const headers of [{}, forged, wrong]) {
      for (const [method, path] of PATHS) {
        const response = await fetch(`${base}${path}`, { method, headers, redirect: 'manual' })
        const what = `${method} ${path} with ${JSON.stringify(headers)}`
        expect(response.status, what).toBe(401)
        expectStrictHeaders(response, what)
        await response.arrayBuffer()
      }
    }
  })

  it('shows the login form as its 401 (no script), takes the token by POST, and sets a cookie that is not the token', async () => {
    const { base, token, bearer, log } = await setup()
    const form = await fetch(`${base}/ui`)
    expect(form.status).toBe(401)
    const html = await form.text()
    expect(html).toContain('<form method="post" action="/ui/login">')
    expect(html).not.toMatch(/<script|\son[a-z]+\s*=|style=|javascript:/i)
    const wrong = await logIn(base, 'y'.repeat(48))
    expect(wrong.status).toBe(401)
    expect(wrong.cookie).toBe('')
    expect(log).toEqual(['toolvisor: operator page: a login with a wrong token (the last from 127.0.0.1)'])
    // More wrong logins soon after are counted, not each logged (no log flood).
    for (let i = 0; i < 5; i++) expect((await logIn(base, `${'z'.repeat(40)}${i}`)).status).toBe(401)
    expect(log).toHaveLength(1)
    const right = await logIn(base, token)
    expect(right.status).toBe(303)
    expect(right.raw).toMatch(/^toolvisor_ui=[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict$/)
    expect(right.raw).not.toContain(token)
    for (const path of ['/ui', '/ui/app.js', '/ui/style.css']) {
      const response = await fetch(`${base}${path}`, { headers: { cookie: right.cookie } })
      expect(response.status, path).toBe(200)
      expectStrictHeaders(response, path, path === '/ui')
      await response.arrayBuffer()
    }
    // Each answer of the page has a nonce of its own, the one its HTML carries, and only there.
    const pages = await Promise.all(
      [1, 2].map(async () => {
        const response = await fetch(`${base}/ui`, { headers: { cookie: right.cookie } })
        return {
          nonce: nonceOf(response.headers.get('content-security-policy')),
          html: await response.text(),
        }
      }),
    )
    expect(pages[0]!.nonce).not.toBe(pages[1]!.nonce)
    for (const { nonce, html } of pages) {
      expect(html.split(nonce)).toHaveLength(2)
      expect(html).toContain(`nonce="${nonce}"`)
      expect(html).not.toContain('__NONCE__')
    }
    // The bearer header works as well (scripts, curl).
    expect((await fetch(`${base}/ui/app.js`, { headers: bearer })).status).toBe(200)
    const out = await fetch(`${base}/ui/logout`, {
      method: 'POST',
      headers: { cookie: right.cookie },
      redirect: 'manual',
    })
    expect(out.status).toBe(303)
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await fetch(`${base}/ui/app.js`, { headers: { cookie: right.cookie } })).status).toBe(401)
  })

  it("styles the login form with the one file served without a login, and names the token's file to a browser on this machine", async () => {
    const { base } = await setup({ tokenFile: '/var/lib/toolvisor/serve.token' })
    const html = await (await fetch(`${base}/ui`)).text()
    expect(html).toContain('<link rel="stylesheet" href="/ui/login.css">')
    // The page is on loopback here, so is its browser: the path is named.
    expect(html).toContain('It is in <code>/var/lib/toolvisor/serve.token</code> on this machine.')
    const sheet = await fetch(`${base}/ui/login.css`)
    expect(sheet.status).toBe(200)
    expect(sheet.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expectStrictHeaders(sheet, '/ui/login.css')
    expect(await sheet.text()).toContain('#says[data-why="wrong"]')
    // Nothing else of the page is: its own stylesheet and scripts still need a login.
    expect((await fetch(`${base}/ui/style.css`)).status).toBe(401)
  })

  it('refuses a page of another origin, and an opaque one (Origin: null), before anything (403), even with a login', async () => {
    const { base, token } = await setup()
    const { cookie } = await logIn(base, token)
    const response = await fetch(`${base}/ui/events`, { headers: { cookie, origin: 'http://evil.example' } })
    expect(response.status).toBe(403)
    const opaque = await fetch(`${base}/ui/events`, { headers: { cookie, origin: 'null' } })
    expect(opaque.status).toBe(403)
    const login = await fetch(`${base}/ui/login`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
      redirect: 'manual',
    })
    expect(login.status).toBe(403)
  })
})

describe('the page itself', () => {
  it('has no inline script, no on* attribute and no inline style; its scripts never write HTML from data', async () => {
    const { base, bearer } = await setup()
    const html = await (await fetch(`${base}/ui`, { headers: bearer })).text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    expect(scripts.length).toBeGreaterThan(0)
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="\/ui\/[a-z-]+\.js"/)
      expect(body!.trim()).toBe('')
    }
    expect(html).not.toMatch(/\son[a-z]+\s*=|\sstyle\s*=|javascript:|<style|https?:\/\//i)
    const files = readdirSync(ASSETS_DIR)
    expect(files.sort()).toEqual([
      'app.js',
      'favicon.svg',
      'index.html',
      'login.css',
      'render.js',
      'style.css',
      'tail.js',
    ])
    for (const file of files.filter((name) => name.endsWith('.js'))) {
      const source = readFileSync(new URL(file, ASSETS_DIR), 'utf8')
      expect(source, file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      )
      // Nothing from elsewhere: every import is one of the page's own files.
      for (const [, from] of source.matchAll(/from '([^']+)'/g))
        expect(from, file).toMatch(/^\/ui\/[a-z-]+\.js$/)
    }
    for (const sheet of ['style.css', 'login.css'])
      expect(readFileSync(new URL(sheet, ASSETS_DIR), 'utf8'), sheet).not.toMatch(/@import|url\(/)
  })

  it('answers HEAD, refuses other methods (405) and unknown files (404)', async () => {
    const { base, bearer } = await setup()
    const head = await fetch(`${base}/ui/style.css`, { method: 'HEAD', headers: bearer })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await fetch(`${base}/ui/app.js`, { method: 'PUT', headers: bearer })).status).toBe(405)
    expect((await fetch(`${base}/ui/events`, { method: 'HEAD', headers: bearer })).status).toBe(405)
    expect((await fetch(`${base}/ui/../package.json`, { headers: bearer })).status).toBe(404)
    expect((await fetch(`${base}/ui/%2e%2e%2fpackage.json`, { headers: bearer })).status).toBe(404)
  })
})

describe('tokenFileFor', () => {
  it('names the file to a client on loopback or the unix socket, never to another', () => {
    const from = (remoteAddress: string | undefined) =>
      ({ socket: { remoteAddress } }) as unknown as IncomingMessage
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1', undefined])
      expect(tokenFileFor(from(local), '/t'), String(local)).toBe('/t')
    expect(tokenFileFor(from('10.0.0.5'), '/t')).toBeUndefined()
  })
})
