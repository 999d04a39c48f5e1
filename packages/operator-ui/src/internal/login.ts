import type { IncomingMessage, ServerResponse } from 'node:http'
import { sameToken } from '@toolvisor/mcp-server'
import { bodyOf, peerOf, send, tokenFileFor } from '../http.js'
import { type Logins, loginCookie } from './logins.js'

/** Why the form is shown. */
type Why = 'first' | 'wrong'

const SAYS: Readonly<Record<Why, string>> = {
  first: 'The operator page needs the bearer token of this toolvisor serve.',
  wrong: 'That is not the token of this toolvisor serve. Try again.',
}

/**
 * The login form: the 401 answer of the page, plain HTML with no script; its stylesheet
 * (`/ui/login.css`) is the one file served without a login. It posts the token to `/ui/login`,
 * never in a URL. `tokenFile`: the token's path, named to a browser on this machine only.
 */
export function loginForm(response: ServerResponse, why: Why, tokenFile?: string): void {
  const where =
    tokenFile === undefined
      ? 'It is in <code>serve.token</code> of the state directory, or the file <code>--token-file</code> names.'
      : `It is in <code>${escapeHtml(tokenFile)}</code> on this machine.`
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolvisor: log in</title>
<link rel="stylesheet" href="/ui/login.css">
</head>
<body>
<main>
<h1>toolvisor serve</h1>
<p id="says" data-why="${why}">${SAYS[why]}</p>
<form method="post" action="/ui/login">
<p><label for="token">Bearer token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus size="48"></p>
<p><button type="submit">Open the operator page</button></p>
</form>
<p class="where">${where}</p>
</main>
</body>
</html>
`
  send(response, 401, 'text/html; charset=utf-8', html, {
    'www-authenticate': 'Bearer realm="toolvisor"',
  })
}

/**
 * `POST /ui/login`: the token from the form (compared in constant time). Right: a new login, its
 * key in an HttpOnly, SameSite=Strict cookie scoped to `/ui`, and 303 to the page. Wrong: the form
 * again, 401, and a line in the log.
 */
export async function logIn(
  request: IncomingMessage,
  response: ServerResponse,
  context: {
    readonly token: string
    readonly tokenFile: string | undefined
    readonly logins: Logins
    readonly log: (line: string) => void
  },
): Promise<void> {
  const body = (await bodyOf(request, 4096)) ?? ''
  const given = new URLSearchParams(body).get('token')?.trim() ?? ''
  const from = peerOf(request)
  if (!sameToken(given, context.token)) {
    const line = context.logins.refused(from)
    if (line !== undefined) context.log(line)
    return loginForm(response, 'wrong', tokenFileFor(request, context.tokenFile))
  }
  const { key, login } = context.logins.open(from)
  context.log(`toolvisor: operator page: ${login.name} from ${from}`)
  send(response, 303, 'text/plain; charset=utf-8', 'logged in: /ui\n', {
    location: '/ui',
    'set-cookie': loginCookie(key),
  })
}

/** Text made safe inside HTML (a path may hold `<` or `&`). */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
