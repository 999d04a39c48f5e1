import { z } from 'zod'

/** toolvisor.json `network`: the operator's bounds on what tools' `runtime.sandbox.net` may ask for (decision 0111). */
export const NetworkSection = z
  .object({
    allow: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "The names a tool's network allow list may name (`registry.npmjs.org`, `*.github.com`, `10.0.0.5:5432`): each of its entries must fall within one of these. Absent: whatever the tool declares (decision 0111).",
      ),
    host: z
      .boolean()
      .optional()
      .describe("Whether a tool may declare `net: host`, the host's whole network (default true)."),
    force: z
      .literal('none')
      .optional()
      .describe(
        '`none`: no tool gets any network; a tool that declares `host` or an allow list does not load.',
      ),
  })
  .strict()
