/**
 * The open reply windows of one service's sends (decision 0020, amended 2026-12-03): while one is
 * open, every event is offered to it first, and an event a window takes is the send's answer,
 * never mail too (the model would read each reply twice).
 */

/** Takes, or not, one event of a send's reply window: true when the send answers with it. */
export type ReplyTaker = (value: unknown) => boolean

/** The windows of one service, in the order they opened. */
export class ReplyWindows {
  #takers: ReplyTaker[] = []

  /** Opens a window: until the returned function closes it, `take` is offered every event. */
  open(take: ReplyTaker): () => void {
    this.#takers = [...this.#takers, take]
    return () => {
      this.#takers = this.#takers.filter((other) => other !== take)
    }
  }

  /** Offers an event to every open window; true when one took it (it is then no mail). */
  offer(value: unknown): boolean {
    let taken = false
    for (const take of this.#takers) {
      try {
        if (take(value)) taken = true
      } catch {
        // A window's bug must not lose the event: untaken, it is mail.
      }
    }
    return taken
  }
}
