import { describe, expect, it } from 'vitest'
import { compose, ctx, tempDir, textOf, v2Tool, writeTool } from './helpers.js'

const tool = (slug: string, extra: Record<string, unknown> = {}) => v2Tool(slug, extra, `echo ${slug}`)

describe('reserved names and name collisions', () => {
  it('refuses each clashing tool with a report naming both paths and the field, and serves the others', async () => {
    const box = tempDir()
    const other = tempDir()
    writeTool(box, 'a-help', tool('help'))
    writeTool(box, 'b-processes', tool('processes'))
    writeTool(box, 'c-first', tool('dup', { help: true }))
    writeTool(other, 'd-second', tool('dup'))
    writeTool(box, 'e-dotted', tool('x', { commands: [{ name: 'y', description: 'y', args: [] }] }))
    writeTool(box, 'f-underscored', tool('x__y'))
    const long = 'c'.repeat(60)
    writeTool(box, 'g-long', tool('longish', { commands: [{ name: long, description: 'c', args: [] }] }))
    writeTool(box, 'h-fine', tool('fine'))
    const { tools } = await compose([box, other])

    expect(tools.list().map((t) => t.name)).toEqual(['dup', 'x.y', 'fine', 'help'])
    expect(tools.loadErrors().map((r) => [r.code, r.field, r.message])).toEqual([
      [
        'TOOLBOX_ERR_NAME_TAKEN',
        '$.slug',
        `${box}/a-help: $.slug: "help" is reserved for toolvisor's shared help tool; rename the tool`,
      ],
      [
        'TOOLBOX_ERR_NAME_TAKEN',
        '$.slug',
        `${box}/b-processes: $.slug: "processes" is reserved for toolvisor's shared processes tool; rename the tool`,
      ],
      [
        'TOOLBOX_ERR_NAME_TAKEN',
        '$.slug',
        `${box}/f-underscored: $.slug: "x__y" and "x.y" of ${box}/e-dotted are both "x__y" for providers; rename one of them`,
      ],
      [
        'TOOLBOX_ERR_NOT_PROVIDER_SAFE',
        '$.commands[0].name',
        `${box}/g-long: $.commands[0].name: "longish.${long}" becomes "longish__${long}" (69 characters) for providers, ` +
          'which accept ^[a-zA-Z0-9_-]{1,64}$; shorten or rename it',
      ],
      [
        'TOOLBOX_ERR_NAME_TAKEN',
        '$.slug',
        `${other}/d-second: $.slug: "dup" is already the name of a tool of ${box}/c-first; rename one of them`,
      ],
    ])
    expect(textOf(await tools.call('dup', {}, ctx()))).toBe('dup\n')
    expect(textOf(await tools.call('fine', {}, ctx()))).toBe('fine\n')
  })
})
