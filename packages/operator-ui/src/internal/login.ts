import type { IncomingMessage, ServerResponse } from 'node:http'
import { sameToken } from '@toolvisor/mcp-server'
import { bodyOf, peerOf, send } from '../http.js'
import { type Logins, loginCookie } from './logins.js'

/** Why the form is shown. */
type Why = 'first' | 'wrong'

const SAYS: Readonly<Record<Why, string>> = {
  first: 'The operator page needs the bearer token of this toolvisor serve.',
  wrong: 'That is not the token of this toolvisor serve. Try again.',
}

/**
 * The login form: the 401 answer of the page, plain HTML with no script and no style of its own
 * (the page's stylesheet is behind the login too). It posts the token to `/ui/login`, never in a URL.
 */
export function loginForm(response: ServerResponse, why: Why): void {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolvisor: log in</title>
</head>
<body>
<main>
<h1>toolvisor serve</h1>
<p id="says">${SAYS[why]}</p>
<form method="post" action="/ui/login">
<p><label for="token">Bearer token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus size="48"></p>
<p><button type="submit">Open the operator page</button></p>
</form>
<p>It is in <code>serve.token</code> of the state directory, or the file <code>--token-file</code> names.</p>
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
  context: { readonly token: string; readonly logins: Logins; readonly log: (line: string) => void },
): Promise<void> {
  const body = (await bodyOf(request, 4096)) ?? ''
  const given = new URLSearchParams(body).get('token')?.trim() ?? ''
  const from = peerOf(request)
  if (!sameToken(given, context.token)) {
    const line = context.logins.refused(from)
    if (line !== undefined) context.log(line)
    return loginForm(response, 'wrong')
  }
  const { key, login } = context.logins.open(from)
  context.log(`toolvisor: operator page: ${login.name} from ${from}`)
  send(response, 303, 'text/plain; charset=utf-8', 'logged in: /ui\n', {
    location: '/ui',
    'set-cookie': loginCookie(key),
  })
}
