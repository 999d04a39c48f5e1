import { chmodSync, existsSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boxWith, compose, ctx, fixtures, tempDir, textOf, toolScript, v2Tool, writeTool } from './helpers.js'

describe('symlinked tools', () => {
  it('resolve to their real file: its directory holds the rundir, and reports name the real path', async () => {
    const real = tempDir()
    const box = tempDir()
    const path = writeTool(
      real,
      'where',
      toolScript(
        { protocol: 2, slug: 'where', description: 'prints its cwd', args: [], runtime: { rundir: 'work' } },
        'pwd',
      ),
    )
    symlinkSync(path, join(box, 'where'))
    const { tools, binary } = await compose([box])
    expect(tools.loadErrors()).toEqual([])
    expect(textOf(await tools.call('where', {}, ctx()))).toBe(`${real}/work\n`)
    expect(existsSync(join(box, 'work'))).toBe(false)
    const loaded = await binary.load(join(box, 'where'))
    expect([loaded.spec.path, loaded.prepared.dir]).toEqual([path, real])
  })

  it('reports a dangling symlink as one, by the path in the toolbox', async () => {
    const box = tempDir()
    symlinkSync(join(box, 'gone'), join(box, 'dangling'))
    const { tools } = await compose([box])
    expect(tools.loadErrors().map((r) => [r.code, r.message])).toEqual([
      ['TOOLBOX_ERR_NOT_EXECUTABLE', `${box}/dangling: a symlink to a file that does not exist`],
    ])
  })
})

describe('files that are not tools', () => {
  it('skips a file without an execute bit quietly: not a tool, not a failure, listed as skipped', async () => {
    const box = tempDir()
    writeFileSync(join(box, 'README.md'), '# my tools\n')
    writeTool(box, 'hello', toolScript({ slug: 'hello', description: 'says hello', args: [] }, 'echo hello'))
    const { tools, binary } = await compose([box])
    expect(tools.list().map((t) => t.name)).toEqual(['hello'])
    expect(tools.loadErrors()).toEqual([])
    expect((await binary.loadToolboxes([box])).skipped).toEqual([join(box, 'README.md')])
  })

  it('still refuses a single path that is not executable, saying how to fix it', async () => {
    const { binary } = await compose([])
    await expect(binary.load(join(fixtures, 'broken', 'not-executable'))).rejects.toThrow(
      `${fixtures}/broken/not-executable: not executable: chmod +x it, or move it out of the toolbox`,
    )
  })
})

describe('editor backups and Windows line endings', () => {
  it('skips editor backups even when executable, and lists them as skipped', async () => {
    const hello = toolScript({ slug: 'hello', description: 'says hello', args: [] }, 'echo hello')
    const box = boxWith({
      hello,
      'hello~': hello,
      'hello.swp': hello,
      'hello.bak': hello,
      'hello.orig': hello,
      '#hello#': hello,
    })
    const { tools, binary } = await compose([box])
    expect(tools.list().map((t) => t.name)).toEqual(['hello'])
    expect(tools.loadErrors()).toEqual([])
    expect((await binary.loadToolboxes([box])).skipped).toEqual(
      ['#hello#', 'hello.bak', 'hello.orig', 'hello.swp', 'hello~'].map((name) => join(box, name)),
    )
  })

  it('reports a script with CRLF line endings as such, not as a spawn ENOENT', async () => {
    const box = tempDir()
    const script = toolScript({ slug: 'dos', description: 'saved on Windows', args: [] }, 'echo hi')
    const path = join(box, 'dos')
    writeFileSync(path, `#!/bin/sh\n${script}\n`.replaceAll('\n', '\r\n'))
    chmodSync(path, 0o755)
    const { tools, binary } = await compose([box])
    const reason =
      'has Windows (CRLF) line endings: its first line "#!/bin/sh\\r" names a program that ends in a carriage return, ' +
      "which does not exist; convert the file to LF endings (sed -i 's/\\r$//' FILE, or dos2unix FILE)"
    expect(tools.loadErrors().map((r) => [r.code, r.message])).toEqual([
      ['TOOLBOX_ERR_NOT_EXECUTABLE', `${path}: ${reason}`],
    ])
    await expect(binary.load(path)).rejects.toThrow(`${path}: ${reason}`)
  })

  it('loads a script whose later lines end in CRLF but whose first line does not', async () => {
    const box = tempDir()
    const path = join(box, 'mixed')
    const script = toolScript({ slug: 'mixed', description: 'one CRLF line', args: [] }, 'echo hi')
    writeFileSync(path, `#!/bin/sh\n# a comment saved on Windows\r\n${script}\n`)
    chmodSync(path, 0o755)
    const { tools } = await compose([box])
    expect(tools.loadErrors()).toEqual([])
    expect(textOf(await tools.call('mixed', {}, ctx()))).toBe('hi\n')
  })
})

describe('service-only fields on other tools', () => {
  it('warns about on_exit and digest (other than their defaults) on a stream tool, and serves it', async () => {
    const box = boxWith({
      ticks: v2Tool(
        'ticks',
        {
          process: { mode: 'stream', output: { framing: 'lines' }, digest: { per: 'events', n: 5 } },
          runtime: { on_exit: 'restart' },
        },
        'echo tick',
      ),
    })
    const { tools } = await compose([box])
    expect(tools.list().map((t) => t.name)).toEqual(['ticks'])
    expect(tools.loadErrors().map((r) => [r.severity, r.message])).toEqual([
      [
        'warning',
        `${box}/ticks: $.process.digest is ignored: digests fold a service's output into mail, and this is a stream tool`,
      ],
      [
        'warning',
        `${box}/ticks: $.runtime.on_exit is ignored: "restart" applies to service tools, and this is a stream tool`,
      ],
    ])
  })
})
