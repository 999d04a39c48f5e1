import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
const [, , session, ...calls] = process.argv
const transport = new StdioClientTransport({ command: process.execPath, args: ['/work/wt-notify/packages/cli/dist/bin.js', 'mcp', '--connect', 'unix:/tmp/tvn/serve.sock', '--session', session, '--token-file', '/tmp/tvn/state/serve.token'] })
const client = new Client({ name: 'drive', version: '0' })
await client.connect(transport)
for (const c of calls) {
  const [name, args] = JSON.parse(c)
  const r = await client.callTool({ name, arguments: args })
  console.log(name, JSON.stringify(args), '=>', r.content.map((x) => x.text).join('\n'))
}
await client.close()
