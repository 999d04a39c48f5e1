import { spawn } from 'node:child_process'
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMailbox } from '@toolvisor/mailbox'
import { afterEach, describe, expect, it } from 'vitest'
import { openJournalStore } from '../src/index.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tv-journal-'))
  dirs.push(dir)
  return dir
}

const control = (id: string) => ({ id, from: 'system' as const, kind: 'control' as const, body: { id } })

describe('the mail journal', () => {
  it('keeps undelivered mail, cursors and ids across a reopen; delivered mail is not delivered again', () => {
    const dir = tempDir()
    let store = openJournalStore({ dir })
    let mailbox = createMailbox({ store })
    mailbox.open('s1')
    mailbox.post('s1', control('a'))
    mailbox.post('s1', control('b'))
    expect(mailbox.deliver('s1').envelopes.map((e) => e.id)).toEqual(['a', 'b'])
    mailbox.post('s1', control('c'))
    store.close()
    expect((statSync(join(dir, 'mail.journal')).mode & 0o777).toString(8)).toBe('600')

    store = openJournalStore({ dir })
    mailbox = createMailbox({ store })
    mailbox.open('s1')
    expect(mailbox.post('s1', control('a'))).toMatchObject({ id: 'a', seq: 1, duplicate: true })
    expect(mailbox.deliver('s1').envelopes.map((e) => e.id)).toEqual(['c'])
    expect(mailbox.deliver('s1').envelopes).toEqual([])
    expect(store.recovery).toEqual({ tornBytes: 0, skippedLines: [] })
    store.close()
  })

  it('keeps what a durable source mailed across a reopen, even compacted: its replayed events are mailed once (decision 0113)', () => {
    const dir = tempDir()
    let store = openJournalStore({ dir })
    let mailbox = createMailbox({ store })
    mailbox.open('s1')
    const source = mailbox.source('s1', 'process:p1', { per: 'events', n: 2 }, { durable: 'k1' })
    for (const n of [1, 2, 3, 4, 5]) source.push(n)
    expect(mailbox.deliver('s1').envelopes.map((e) => e.id)).toEqual(['process:p1@k1#2', 'process:p1@k1#4'])
    store.compact()
    store.close() // as a kill -9 would: event 5 was never in an envelope

    store = openJournalStore({ dir })
    expect(store.lastKeyed('s1', 'process:p1@k1#')).toBe(4)
    mailbox = createMailbox({ store })
    mailbox.open('s1')
    const again = mailbox.source('s1', 'process:p1', { per: 'events', n: 2 }, { durable: 'k1' })
    for (const n of [1, 2, 3, 4, 5, 6]) again.push(n)
    expect(mailbox.deliver('s1').envelopes.map((e) => e.body)).toEqual([[5, 6]])
    store.close()
  })

  it('keeps a withdrawal across a reopen: withdrawn mail is never delivered, and its id stays a repeat', () => {
    const dir = tempDir()
    let store = openJournalStore({ dir })
    let mailbox = createMailbox({ store })
    mailbox.open('s1')
    mailbox.post('s1', control('a'))
    mailbox.post('s1', { id: 'done-t1', from: 'task:t1', kind: 'completion', body: {} })
    expect(mailbox.withdraw('s1', { from: 'task:t1', kind: 'completion' })).toBe(1)
    store.close()
    store = openJournalStore({ dir })
    mailbox = createMailbox({ store })
    mailbox.open('s1')
    expect(
      mailbox.post('s1', { id: 'done-t1', from: 'task:t1', kind: 'completion', body: {} }),
    ).toMatchObject({
      duplicate: true,
    })
    expect(mailbox.deliver('s1').envelopes.map((e) => e.id)).toEqual(['a'])
    store.close()
  })

  it('cuts a record torn by a crash, and skips (and names) a line it cannot read in the middle', () => {
    const dir = tempDir()
    const store = openJournalStore({ dir })
    const mailbox = createMailbox({ store })
    mailbox.open('s1')
    mailbox.post('s1', control('a'))
    store.close()
    const path = join(dir, 'mail.journal')
    const good = readFileSync(path, 'utf8')
    appendFileSync(path, '{"op":"append","sess')
    const torn = openJournalStore({ dir })
    expect(torn.recovery).toEqual({ tornBytes: 20, skippedLines: [] })
    expect(readFileSync(path, 'utf8')).toBe(good)
    torn.close()
    appendFileSync(path, 'garbage\n')
    const skipped = openJournalStore({ dir })
    expect(skipped.recovery.skippedLines).toEqual([2])
    const reopened = createMailbox({ store: skipped })
    reopened.open('s1')
    expect(reopened.page('s1').envelopes.map((e) => e.id)).toEqual(['a'])
    skipped.close()
  })

  it('compacts into one snapshot that holds the same mail, ids, cursors and seqs', () => {
    const dir = tempDir()
    const store = openJournalStore({ dir, compactBytes: 2_000 })
    const mailbox = createMailbox({ store, keepRead: 2 })
    mailbox.open('s1')
    for (let i = 0; i < 40; i++) {
      mailbox.post('s1', control(`m-${i}`))
      if (i % 5 === 0) mailbox.deliver('s1')
    }
    const lines = readFileSync(join(dir, 'mail.journal'), 'utf8').split('\n')
    expect(lines.length).toBeLessThan(40)
    const before = { next: mailbox.page('s1').envelopes.map((e) => e.id), last: store.lastSeq('s1') }
    store.close()
    const reopened = openJournalStore({ dir })
    const again = createMailbox({ store: reopened, keepRead: 2 })
    again.open('s1')
    expect({ next: again.page('s1').envelopes.map((e) => e.id), last: reopened.lastSeq('s1') }).toEqual(
      before,
    )
    expect(again.post('s1', control('m-3'))).toMatchObject({ duplicate: true, seq: 4 })
    expect(again.deliver('s1').envelopes.map((e) => e.id)).toEqual(['m-36', 'm-37', 'm-38', 'm-39'])
    reopened.close()
  })

  it('after kill -9 at any moment: accepted mail survives, and nothing is delivered twice', async () => {
    const dir = tempDir()
    const posted = new Set<string>()
    const delivered: string[] = []
    let next = 0
    for (let round = 0; round < 6; round++) {
      const child = spawn(
        process.execPath,
        [join(import.meta.dirname, 'fixtures', 'poster.mjs'), dir, String(next)],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
      let out = ''
      child.stdout.on('data', (chunk: Buffer) => (out += chunk))
      const exited = new Promise((resolve) => child.once('exit', resolve))
      // Kill it at a different moment each round, once it has posted something.
      const goal = 50 + round * 97
      while ((out.match(/^posted /gm) ?? []).length < goal) await new Promise((r) => setTimeout(r, 5))
      child.kill('SIGKILL')
      await exited
      for (const line of out.split('\n')) {
        const [what, id] = line.split(' ')
        if (what === 'posted') posted.add(id!)
        // A line cut by the kill is not a whole report.
        if (what === 'delivered' && id) delivered.push(id)
      }
      next = Number([...posted].at(-1)!.slice(1)) + 1_000
    }
    // Whatever is left is delivered by a last, clean run.
    const store = openJournalStore({ dir })
    const mailbox = createMailbox({ store, maxUnread: 100_000 })
    mailbox.open('s1')
    delivered.push(...mailbox.deliver('s1').envelopes.map((e) => e.id))
    // Every envelope a post returned for is in the journal.
    for (const id of posted) expect(store.seqOf('s1', id), id).toBeDefined()
    store.close()
    // The delivery cursor is on disk before deliver returns: nothing comes twice.
    expect(new Set(delivered).size).toBe(delivered.length)
    // What a kill cut between the cursor's move and the printing of the batch is the one batch in
    // flight (delivery is at most once: a crash there loses sight of it, never repeats it).
    const unseen = [...posted].filter((id) => !delivered.includes(id))
    expect(unseen.length).toBeLessThanOrEqual(6 * 8)
  })
})
