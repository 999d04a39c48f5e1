/** Decision 0092: the state directory must be toolvisor's alone, and every level above it safe from renames. */
import { chmodSync, chownSync, lchownSync, mkdirSync, statSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { trustStateDir } from '../src/index.js'
import { tempDir } from './helpers.js'

const isRoot = process.geteuid?.() === 0
const euid = process.geteuid?.() ?? -1
/** nobody: any uid that is neither root nor toolvisor's own. */
const OTHER = 65534

const refusal = (stateDir: string, what: string, fix: string) =>
  `the state directory ${stateDir} is not safe to use: ${what}: ${fix}`

describe('the state directory (decision 0092)', () => {
  it('makes the missing levels mode 0700 and accepts a state dir of its own under a sticky /tmp', () => {
    const base = tempDir('tv-trust-')
    const stateDir = join(base, 'a', 'b', 'state')
    expect(trustStateDir(stateDir)).toBe(stateDir)
    for (const level of [join(base, 'a'), join(base, 'a', 'b'), stateDir, join(stateDir, 'runs')]) {
      expect(statSync(level).mode & 0o777).toBe(0o700)
    }
    // A state dir that is a link to one of its own, in a directory of its own, is followed once.
    const link = join(base, 'link')
    symlinkSync(stateDir, link)
    expect(trustStateDir(link)).toBe(link)
  })

  it('refuses a state dir, or its runs/, that group or others may write, naming the mode and the fix', () => {
    const stateDir = tempDir('tv-trust-')
    chmodSync(stateDir, 0o777)
    expect(() => trustStateDir(stateDir)).toThrow(
      refusal(
        stateDir,
        `${stateDir} is writable by group or others (mode 0777), so another user could swap what toolvisor writes there for links to any file`,
        `chmod 700 ${stateDir}, or start toolvisor with another --state-dir`,
      ),
    )
    chmodSync(stateDir, 0o755)
    const runs = join(stateDir, 'runs')
    mkdirSync(runs, { mode: 0o700 })
    chmodSync(runs, 0o770)
    expect(() => trustStateDir(stateDir)).toThrow(
      refusal(
        stateDir,
        `${runs} is writable by group or others (mode 0770), so another user could swap what toolvisor writes there for links to any file`,
        `chmod 700 ${runs}, or start toolvisor with another --state-dir`,
      ),
    )
  })

  it('refuses a directory above that others may write without the sticky bit, and accepts it sticky', () => {
    const shared = tempDir('tv-trust-')
    chmodSync(shared, 0o777)
    const stateDir = join(shared, 'mine')
    expect(() => trustStateDir(stateDir)).toThrow(
      refusal(
        stateDir,
        `${shared}, above it, is writable by group or others without the sticky bit (mode 0777), so another user could rename what is in it and put a link in its place`,
        `chmod go-w ${shared} (or chmod +t), or start toolvisor with another --state-dir`,
      ),
    )
    chmodSync(shared, 0o1777)
    expect(trustStateDir(stateDir)).toBe(stateDir)
  })

  it('refuses a link to a state dir whose real parent others may write', () => {
    const base = tempDir('tv-trust-')
    const shared = join(base, 'shared')
    mkdirSync(join(shared, 'state'), { recursive: true, mode: 0o700 })
    chmodSync(shared, 0o777)
    symlinkSync(join(shared, 'state'), join(base, 'state'))
    expect(() => trustStateDir(join(base, 'state'))).toThrow(
      `${shared}, above it, is writable by group or others`,
    )
  })

  describe.skipIf(!isRoot)('owners (needs root to give a directory to another user)', () => {
    it("refuses a state dir another user owns, and a directory above that is neither root's nor its own", () => {
      const base = tempDir('tv-trust-')
      chmodSync(base, 0o755)
      const theirs = join(base, 'theirs')
      mkdirSync(theirs, { mode: 0o700 })
      chownSync(theirs, OTHER, OTHER)
      expect(() => trustStateDir(theirs)).toThrow(
        refusal(
          theirs,
          `${theirs} is owned by uid ${OTHER}, not by toolvisor's uid ${euid}, so that user could swap what toolvisor writes there for links to any file`,
          `chown ${euid} ${theirs} and chmod 700 ${theirs}, or start toolvisor with another --state-dir`,
        ),
      )
      const under = join(theirs, 'state')
      mkdirSync(under, { mode: 0o700 })
      expect(() => trustStateDir(under)).toThrow(
        refusal(
          under,
          `${theirs}, above it, is a directory owned by uid ${OTHER} (neither root nor toolvisor's uid ${euid}), so that user could rename what is in it and put a link in its place`,
          "start toolvisor with a --state-dir whose every parent is root's or toolvisor's own",
        ),
      )
    })

    it('refuses a link above that another user made in a sticky directory', () => {
      const sticky = tempDir('tv-trust-')
      chmodSync(sticky, 0o1777)
      const real = tempDir('tv-trust-real-')
      const link = join(sticky, 'link')
      symlinkSync(real, link)
      lchownSync(link, OTHER, OTHER) // what `ln -s` by that user would have made
      expect(() => trustStateDir(join(link, 'state'))).toThrow(
        `${link}, above it, is a link owned by uid ${OTHER} (neither root nor toolvisor's uid ${euid})`,
      )
    })
  })
})
