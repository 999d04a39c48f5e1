import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server'
import { foldMail } from '@toolvisor/answers'
import type { SessionMailOptions } from './mail.js'

/** The one resource of a 2026-07-28 connection: the mail waiting for its session. */
export const MAIL_URI = 'toolvisor://mail'

/**
 * Serves the session's mail as the resource `toolvisor://mail` (decision 0109, point 4), the
 * 2026-07-28 form of the mail notice: `resources/list` names it, the same for every session, and
 * `resources/read` delivers what waits for the session, folded as a result folds it (at most
 * `mailBytes`; what does not fit stays for the next read), or says that nothing waits. A listen
 * subscription naming it in `resourceSubscriptions` hears `notifications/resources/updated` when
 * mail arrives (`watchMail` of `./mail.js`).
 */
export function serveMailResource(server: Server, mail: SessionMailOptions): void {
  server.setRequestHandler('resources/list', async () => ({
    resources: [
      {
        uri: MAIL_URI,
        name: 'mail',
        title: "This session's mail",
        description:
          "What this session's processes and tasks reported since it was last read (completions, service events), also folded into tool results. Reading it delivers it.",
        mimeType: 'text/plain',
      },
    ],
  }))
  server.setRequestHandler('resources/read', async (request) => {
    const { uri } = request.params
    if (uri !== MAIL_URI) {
      throw new ProtocolError(
        ProtocolErrorCode.ResourceNotFound,
        `no resource ${JSON.stringify(uri.slice(0, 200))}: this server has one, ${MAIL_URI}`,
        { uri },
      )
    }
    const { mailbox, sessionId, readBack } = mail
    // Read explicitly, so folded even when the operator folds none into results (mailBytes 0).
    const blocks = foldMail(mailbox, sessionId, { maxBytes: Math.max(mail.mailBytes, 16 * 1024), readBack })
    const text = blocks.length > 0 ? blocks.join('\n') : 'no mail waits for this session'
    return { contents: [{ uri: MAIL_URI, mimeType: 'text/plain', text }] }
  })
}
