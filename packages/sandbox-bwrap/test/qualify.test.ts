import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bwrapMechanism } from '../src/index.js'
import { cleanup, installProbe, policy, script, toolDir } from './helpers.js'

const FIX_MISSING =
  'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), or set the sandbox-bwrap "bwrap" path'
const FIX_USERNS =
  'use bubblewrap >= 0.8.0 and enable unprivileged user namespaces for the user bwrap runs as ' +
  '(sysctl user.max_user_namespaces > 0; Debian: kernel.unprivileged_userns_clone=1; ' +
  'Ubuntu: kernel.apparmor_restrict_unprivileged_userns=0)'
const FIX_NET =
  'allow network namespaces for the user bwrap runs as (sysctl user.max_net_namespaces > 0), ' +
  'or pick a mechanism that honours net: none'
const ENOSPC =
  'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)'

let root: string
let tool: string
let probe: string
let log: string
/**
 * Real kernel refusals, not fakes: each wrapper runs the real bwrap inside a user namespace whose
 * `user.max_<kind>_namespaces` limit it first sets to 0, as a host that forbids them would.
 */
let noNetBwrap: string
let noUserNsBwrap: string
let countingBwrap: string

const limited = (kind: string) =>
  `exec unshare --user --map-root-user /bin/sh -c 'echo 0 > /proc/sys/user/max_${kind}_namespaces && exec /usr/bin/bwrap "$@"' sh "$@"`

beforeAll(() => {
  root = toolDir('tvbw-qualify-')
  tool = join(root, 'tool')
  mkdirSync(tool)
  probe = installProbe(tool)
  const bin = join(root, 'bin')
  mkdirSync(bin)
  log = join(root, 'runs.log')
  noNetBwrap = script(bin, 'bwrap-no-netns', limited('net'))
  noUserNsBwrap = script(bin, 'bwrap-no-userns', limited('user'))
  countingBwrap = script(bin, 'bwrap-counting', `echo run >> ${log}\nexec /usr/bin/bwrap "$@"`)
})
afterEach(async () => {
  expect(await cleanup()).toEqual([])
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('qualify', () => {
  it('accepts every field where bwrap runs (net: none included)', async () => {
    const bwrap = bwrapMechanism()
    expect(await bwrap.qualify(policy(tool, probe, { net: 'none', tmp: 'private' }), undefined)).toEqual({
      ok: true,
    })
    expect(await bwrap.qualify(policy(tool, probe, { net: 'host', tmp: 'shared' }), undefined)).toEqual({
      ok: true,
    })
  })

  it('answers "mechanism" with a fix when the bwrap binary is missing', async () => {
    const bwrap = bwrapMechanism({ bwrap: '/nonexistent/bwrap' })
    expect(await bwrap.qualify(policy(tool, probe), undefined)).toEqual({
      ok: false,
      field: 'mechanism',
      reason: '/nonexistent/bwrap could not be run: spawn /nonexistent/bwrap ENOENT',
      fix: FIX_MISSING,
    })
  })

  it('answers "mechanism" with bwrap’s own words when user namespaces are refused', async () => {
    const bwrap = bwrapMechanism({ bwrap: noUserNsBwrap })
    expect(await bwrap.qualify(policy(tool, probe), undefined)).toEqual({
      ok: false,
      field: 'mechanism',
      reason: `${noUserNsBwrap} exited 1 in its preflight: ${ENOSPC}`,
      fix: FIX_USERNS,
    })
  })

  it('answers "net" when only network namespaces are refused; other tools still qualify', async () => {
    const bwrap = bwrapMechanism({ bwrap: noNetBwrap })
    expect(await bwrap.qualify(policy(tool, probe, { net: 'none' }), undefined)).toEqual({
      ok: false,
      field: 'net',
      reason: `${noNetBwrap} exited 1 in its preflight: ${ENOSPC}`,
      fix: FIX_NET,
    })
    expect(await bwrap.qualify(policy(tool, probe, { net: 'host', tmp: 'private' }), undefined)).toEqual({
      ok: true,
    })
  })

  it('runs each preflight once per flag set and caches it, concurrent callers included', async () => {
    const bwrap = bwrapMechanism({ bwrap: countingBwrap })
    const none = policy(tool, probe, { net: 'none' })
    const results = await Promise.all([bwrap.qualify(none, undefined), bwrap.qualify(none, undefined)])
    expect(results).toEqual([{ ok: true }, { ok: true }])
    expect(await bwrap.qualify(policy(tool, probe, { net: 'host' }), undefined)).toEqual({ ok: true })
    expect(readFileSync(log, 'utf8')).toBe('run\nrun\n') // base + net, nothing more
  })
})

describe('describe', () => {
  it('reports what it enforces and its gaps, found by running bwrap', async () => {
    const description = await bwrapMechanism().describe()
    expect(description.name).toBe('bwrap')
    expect(description.available).toBe(true)
    expect(description.unavailable).toBeUndefined()
    expect(Object.keys(description.enforces).sort()).toEqual(['fs.read', 'fs.write', 'net', 'run_as', 'tmp'])
    expect(description.gaps).toEqual([
      'net (an allow list): a program that ignores the proxy variables reaches nothing (no route), and its attempt is not marked: only what reaches the proxy is',
      'no unix socket at all (socket(AF_UNIX) and datagram socketpair() are refused for every tool, so none outside the grants is reachable): a tool that talks to a local daemon by socket cannot run under bwrap',
      'syscalls: only the allowlist (a call not on it is ENOSYS, callers fall back); a tool that needs namespaces, mounts, ptrace, bpf or perf_event_open (a container runtime, a debugger, a profiler) cannot run under bwrap',
      'fs: paths outside the grants are hidden (ENOENT), not denied (EACCES) as under Landlock',
      "fs: /usr and /etc are readable whole: what the tool's user may read there (as root, tools run as the sandbox user unless they declare run_as)",
    ])
  })

  it('is unavailable, with reason and fix, when bwrap cannot run; states a net: none it cannot honour', async () => {
    expect(await bwrapMechanism({ bwrap: '/nonexistent/bwrap' }).describe()).toMatchObject({
      available: false,
      unavailable: {
        reason: '/nonexistent/bwrap could not be run: spawn /nonexistent/bwrap ENOENT',
        fix: FIX_MISSING,
      },
    })
    const noNet = await bwrapMechanism({ bwrap: noNetBwrap }).describe()
    expect(noNet.available).toBe(true)
    expect(noNet.gaps[0]).toBe(
      `net: none cannot be honoured here: ${noNetBwrap} exited 1 in its preflight: ${ENOSPC}`,
    )
  })
})
