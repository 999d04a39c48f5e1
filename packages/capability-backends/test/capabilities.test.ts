import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describePlugin, LoadingError } from '@toolvisor/describe-v2'
import { Kernel, KernelError } from '@toolvisor/kernel'
import { launchNativePlugin } from '@toolvisor/launch-native'
import { markedProcesses, RuntimeToken, runtimePlugin } from '@toolvisor/process-runtime'
import { tasksPlugin } from '@toolvisor/tasks'
import { BinaryToolsToken, type ToolCallContext, ToolsToken, toolboxPlugin } from '@toolvisor/toolbox'
import { afterEach, describe, expect, it } from 'vitest'
import {
  CapabilitiesToken,
  CheckCache,
  cachedCheck,
  capabilitiesPlugin,
  resolveCapability,
  runCheck,
} from '../src/index.js'

const web = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'web')
const backend = (name: string) => join(web, name)
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
})

async function kernelWith(capabilities: Record<string, unknown> | undefined) {
  const stateDir = mkdtempSync(join(tmpdir(), 'tv-cap-'))
  const kernel = new Kernel()
  kernel.use(describePlugin)
  kernel.use(launchNativePlugin)
  kernel.use(runtimePlugin, { stateDir, spawner: 'native' })
  kernel.use(tasksPlugin)
  await kernel.use(toolboxPlugin, { toolboxes: [] })
  const handle = capabilities ? kernel.use(capabilitiesPlugin, capabilities) : undefined
  const runId = (kernel.get(RuntimeToken) as unknown as { runId: string }).runId
  cleanups.push(async () => {
    await kernel.dispose()
    expect(markedProcesses(runId)).toEqual([])
    rmSync(stateDir, { recursive: true, force: true })
  })
  return { kernel, handle, stateDir }
}

const ctx: ToolCallContext = { sessionId: 's', signal: new AbortController().signal }
const webRead = (extra: Record<string, unknown> = {}) => ({
  capabilities: [
    { capability: 'web_read', backends: [backend('read-jina'), backend('read-curl'), backend('read-lynx')] },
  ],
  ...extra,
})

describe('ordered backends', () => {
  it('makes the first ok backend active; a failed probe keeps its detail and fix', async () => {
    const { kernel, handle } = await kernelWith(webRead())
    await handle
    const [report] = kernel.get(CapabilitiesToken)!.reports()
    expect(report).toEqual({
      capability: 'web_read',
      required: true,
      active: 'read-curl',
      backends: [
        {
          name: 'read-jina',
          path: backend('read-jina'),
          status: 'failed',
          ms: expect.any(Number),
          detail: 'check exited with code 1: jina reader answered 429',
          fix: 'set JINA_API_KEY in the envdir',
        },
        { name: 'read-curl', path: backend('read-curl'), status: 'ok', ms: expect.any(Number) },
        {
          name: 'read-lynx',
          path: backend('read-lynx'),
          status: 'unverified',
          detail: 'the tool declares no check: it loaded, nothing more is known',
        },
      ],
    })
  })

  it('serves one tool named after the capability; every result names its backend; no silent fallback', async () => {
    const { kernel, handle } = await kernelWith(webRead())
    await handle
    const tools = kernel.get(ToolsToken)!
    const tool = tools.get('web_read')!
    expect(tool.description).toBe('Reads a web page with curl')
    const result = await tools.call('web_read', { url: 'http://x.example' }, ctx)
    expect(result.content.map((c) => c.text).join('\n')).toBe(
      'page http://x.example via curl\n[backend: read-curl]',
    )
    expect(result.meta).toMatchObject({ backend: 'read-curl' })
    const failed = await tools.call('web_read', { url: 'http://fail.example' }, ctx)
    expect(failed.isError).toBe(true)
    const text = failed.content.map((c) => c.text).join('\n')
    expect(text).toMatch(
      /^read_curl failed: exit code 6\n--- stderr ---\ncurl: \(6\) could not resolve host\n\[backend: read-curl\]$/,
    )
  })

  it('moves an overridden backend first, which stays inactive when its probe failed', async () => {
    const { kernel, handle } = await kernelWith(webRead({ backends: { web_read: 'read-jina' } }))
    await handle
    const [report] = kernel.get(CapabilitiesToken)!.reports()
    expect(report!.backends.map((b) => [b.name, b.status])).toEqual([
      ['read-jina', 'failed'],
      ['read-curl', 'ok'],
      ['read-lynx', 'unverified'],
    ])
    expect(report!.active).toBe('read-curl')
  })

  it('ignores an unknown override with a warning: a stale override never hides a working backend', async () => {
    const { kernel, handle } = await kernelWith(webRead({ backends: { web_read: 'read-gone', other: 'x' } }))
    await handle
    expect(kernel.get(CapabilitiesToken)!.reports()[0]!.active).toBe('read-curl')
    expect(
      kernel
        .get(ToolsToken)!
        .loadErrors()
        .map((r) => [r.severity, r.message]),
    ).toEqual([
      ['warning', '--backend other=x: no capability is named "other"; the override is ignored'],
      [
        'warning',
        '--backend web_read=read-gone: web_read has no backend named "read-gone" (its backends: read-jina, read-curl, read-lynx); the override is ignored',
      ],
    ])
  })

  it('falls to the first unverified backend when no probe passes', async () => {
    const { kernel, handle } = await kernelWith({
      capabilities: [{ capability: 'web_read', backends: [backend('read-jina'), backend('read-lynx')] }],
    })
    await handle
    expect(kernel.get(CapabilitiesToken)!.reports()[0]!.active).toBe('read-lynx')
  })
})

describe('configuration errors', () => {
  it('refuses backends that differ on an argument, naming it', async () => {
    const { handle } = await kernelWith({
      capabilities: [{ capability: 'web_read', backends: [backend('read-curl'), backend('read-odd')] }],
    })
    const error = await Promise.resolve(handle).then(
      () => undefined,
      (e: KernelError) => e.cause,
    )
    expect(LoadingError.is(error)).toBe(true)
    expect((error as LoadingError).code).toBe('CAPABILITY_ERR_ARGS_DIFFER')
    expect((error as LoadingError).message).toBe(
      `${backend('read-odd')}: $.args[0]: capability web_read: argument "url" differs between backends: integer, single in read-odd, string, single in read-curl; every backend must expose the same arguments (names, backing types, arity)`,
    )
  })

  it('fails a required capability with no usable backend, and leaves an optional one out with a warning', async () => {
    const required = await kernelWith({
      capabilities: [{ capability: 'web_read', backends: [backend('read-jina')] }],
    })
    const error = await Promise.resolve(required.handle).then(
      () => undefined,
      (e: KernelError) => e,
    )
    expect(KernelError.is(error)).toBe(true)
    expect(((error as KernelError).cause as LoadingError).message).toBe(
      'web_read: capability web_read has no usable backend: read-jina: failed (check exited with code 1: jina reader answered 429); it is required',
    )
    const optional = await kernelWith({
      capabilities: [{ capability: 'web_read', required: false, backends: [backend('read-jina')] }],
    })
    await optional.handle
    const tools = optional.kernel.get(ToolsToken)!
    expect(tools.get('web_read')).toBeUndefined()
    expect(tools.loadErrors()).toEqual([
      expect.objectContaining({
        severity: 'warning',
        message: expect.stringMatching(/no usable backend: .*; it is optional and left out$/),
      }),
    ])
  })
})

describe('the check verb', () => {
  it('cuts a hanging probe at its bound and reports it failed; bad JSON is failed too', async () => {
    const { kernel } = await kernelWith(undefined)
    const binary = kernel.get(BinaryToolsToken)!
    const slow = await runCheck(binary, await binary.load(backend('read-slow')), 500)
    expect(slow).toMatchObject({ status: 'failed', detail: 'check did not answer within 0.5 s' })
    expect(slow.ms).toBeGreaterThanOrEqual(450)
    const bad = await runCheck(binary, await binary.load(backend('read-badjson')))
    expect(bad).toMatchObject({
      status: 'failed',
      detail: 'check printed something that is not one JSON object: "all good!"',
    })
  })

  it('caches results for a TTL, across processes; a probe runs afresh', async () => {
    const { kernel, stateDir } = await kernelWith(undefined)
    const binary = kernel.get(BinaryToolsToken)!
    const file = join(stateDir, 'checks.json')
    const counter = join(stateDir, 'runs.txt')
    process.env.CHECK_COUNT_FILE = counter
    const runs = () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length
    try {
      const config = { capability: 'web_read', backends: [backend('read-counted')], required: true }
      const resolve = (cache: CheckCache, probe: boolean) =>
        resolveCapability(config, { binary, cache, probe, warn: () => {} })
      expect((await resolve(new CheckCache({ file, ttlMs: 60_000 }), false)).report.active).toBe(
        'read-counted',
      )
      expect(runs()).toBe(1)
      // A new cache on the same file (as another process would have) reuses the fresh result.
      await resolve(new CheckCache({ file, ttlMs: 60_000 }), false)
      expect(runs()).toBe(1)
      // Past the TTL it runs again; --probe always runs.
      await resolve(new CheckCache({ file, ttlMs: 0 }), false)
      expect(runs()).toBe(2)
      await resolve(new CheckCache({ file, ttlMs: 60_000 }), true)
      expect(runs()).toBe(3)
    } finally {
      delete process.env.CHECK_COUNT_FILE
    }
  })
})

describe('check tells the truth', () => {
  it('probes a backend listed by several capabilities once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'tv-cap-count-'))
    const counter = join(stateDir, 'runs.txt')
    process.env.CHECK_COUNT_FILE = counter
    try {
      const { handle } = await kernelWith({
        capabilities: [
          { capability: 'web_read', backends: [backend('read-counted')] },
          { capability: 'page_read', backends: [backend('read-counted')] },
        ],
        probe: true,
      })
      await handle
      expect(readFileSync(counter, 'utf8')).toBe('run\n')
    } finally {
      delete process.env.CHECK_COUNT_FILE
      rmSync(stateDir, { recursive: true, force: true })
    }
  })

  it('does not reuse a result for a tool that changed since (its mtime, its describe document)', async () => {
    const { kernel, stateDir } = await kernelWith(undefined)
    const binary = kernel.get(BinaryToolsToken)!
    const tool = join(stateDir, 'read-counted')
    copyFileSync(backend('read-counted'), tool)
    chmodSync(tool, 0o755)
    const file = join(stateDir, 'checks.json')
    const counter = join(stateDir, 'runs.txt')
    process.env.CHECK_COUNT_FILE = counter
    const runs = () => readFileSync(counter, 'utf8').split('\n').filter(Boolean).length
    try {
      const check = async () =>
        cachedCheck(binary, await binary.load(tool), new CheckCache({ file, ttlMs: 60_000 }), {
          probe: false,
        })
      await check()
      await check()
      expect(runs()).toBe(1)
      const later = new Date(Date.now() + 60_000)
      utimesSync(tool, later, later)
      await check()
      expect(runs()).toBe(2)
      writeFileSync(tool, readFileSync(tool, 'utf8').replace('"description": "x"', '"description": "y"'))
      utimesSync(tool, later, later) // the same size and mtime as before: only the describe document differs
      await check()
      expect(runs()).toBe(3)
    } finally {
      delete process.env.CHECK_COUNT_FILE
    }
  })

  it('reports a backend that declares a sandbox when no mechanism is configured as failed, not skipped', async () => {
    const { kernel, handle } = await kernelWith({
      capabilities: [{ capability: 'web_read', required: false, backends: [backend('read-boxed')] }],
    })
    await handle
    expect(kernel.get(CapabilitiesToken)!.reports()[0]!.backends).toEqual([
      {
        name: 'read-boxed',
        path: backend('read-boxed'),
        status: 'failed',
        detail: `${backend('read-boxed')}: $.runtime.sandbox: declared, but no sandbox mechanism is configured: start toolvisor with --sandbox bwrap, landlock or auto`,
      },
    ])
  })

  it('refuses a capability named like a reserved tool', async () => {
    const { handle } = await kernelWith({
      capabilities: [{ capability: 'processes', backends: [backend('read-curl')] }],
    })
    const error = await Promise.resolve(handle).then(
      () => undefined,
      (e: KernelError) => e.cause as LoadingError,
    )
    expect([error?.code, error?.message]).toEqual([
      'CAPABILITY_ERR_DUPLICATE',
      `processes: capability processes cannot be served: "processes" is reserved for toolvisor's shared processes tool; rename the capability`,
    ])
  })
})
