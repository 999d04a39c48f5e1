import { describe, expect, it } from 'vitest'
import { Screen, screenText } from '../src/index.js'

describe('the screen', () => {
  it('renders what a person would see: lines, cursor moves, erasing, wrapping', async () => {
    const screen = new Screen({ columns: 10, rows: 4 })
    screen.write('hello\r\nworld')
    screen.write('\x1b[1;1Hj') // cursor home, overwrite h
    screen.write('\x1b[3;1H0123456789abc') // wraps at 10 columns
    const snapshot = await screen.snapshot()
    expect(snapshot.rows).toEqual(['jello', 'world', '0123456789', 'abc'])
    expect(snapshot.cursor).toEqual({ row: 3, column: 3 })
    screen.write('\x1b[2J\x1b[H')
    expect((await screen.snapshot()).rows).toEqual(['', '', '', ''])
    screen.dispose()
  })

  it('follows a full-screen program onto the alternate screen and back, with its title and key mode', async () => {
    const screen = new Screen({ columns: 20, rows: 3 })
    screen.write('$ less file\r\n')
    expect(screen.modes.applicationCursor).toBe(false)
    screen.write('\x1b]2;less file\x07\x1b[?1049h\x1b[?1h\x1b[Hpage one')
    const inside = await screen.snapshot()
    expect(inside).toMatchObject({ buffer: 'alternate', title: 'less file', rows: ['page one', '', ''] })
    expect(screen.modes.applicationCursor).toBe(true)
    screen.write('\x1b[?1l\x1b[?1049l')
    const back = await screen.snapshot()
    expect(back).toMatchObject({ buffer: 'normal', rows: ['$ less file', '', ''] })
    expect(screen.modes.applicationCursor).toBe(false)
    expect(screenText(inside)).toBe(
      '[screen 20x3, full-screen program, title "less file"; cursor at row 1, column 9]\npage one',
    )
    screen.dispose()
  })

  it('takes a new size and keeps what it shows; new output uses the width', async () => {
    const screen = new Screen({ columns: 10, rows: 3 })
    screen.write('0123456789abcdef')
    screen.resize(20, 4)
    screen.write('\r\n01234567890123456789')
    const snapshot = await screen.snapshot()
    expect(snapshot).toMatchObject({ columns: 20, height: 4 })
    expect(snapshot.rows).toEqual(['0123456789', 'abcdef', '01234567890123456789', ''])
    screen.dispose()
  })
})
