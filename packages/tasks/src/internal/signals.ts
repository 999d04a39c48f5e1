/**
 * What the task registry tells: completions (`onDone`), news (`onNews`), and the words a surface
 * gave for the report of a lost task of its kind (`wordLost`). One listener's bug never hides
 * anything from the others.
 */
import type { TaskCompletion, TaskInfo, TaskKind, TaskNews } from '../types.js'

export class TaskSignals {
  readonly #done = new Set<(completion: TaskCompletion) => void>()
  readonly #news = new Set<(news: TaskNews) => void>()
  readonly #lostWords = new Map<TaskKind, (task: TaskInfo) => unknown>()

  onDone(listener: (completion: TaskCompletion) => void): () => void {
    this.#done.add(listener)
    return () => void this.#done.delete(listener)
  }

  onNews(listener: (news: TaskNews) => void): () => void {
    this.#news.add(listener)
    return () => void this.#news.delete(listener)
  }

  /** A task ended: its completion to every `onDone` listener, then its `ended` news. */
  completed(completion: TaskCompletion): void {
    each(this.#done, completion)
    this.announce({ type: 'ended', task: completion.task, observed: completion.observed })
  }

  announce(news: TaskNews): void {
    each(this.#news, news)
  }

  wordLost(kind: TaskKind, words: (task: TaskInfo) => unknown): () => void {
    this.#lostWords.set(kind, words)
    return () => {
      if (this.#lostWords.get(kind) === words) this.#lostWords.delete(kind)
    }
  }

  lostWords(task: TaskInfo): unknown {
    return this.#lostWords.get(task.kind)?.(task)
  }
}

function each<T>(listeners: ReadonlySet<(value: T) => void>, value: T): void {
  for (const listener of listeners) {
    try {
      listener(value)
    } catch {
      // one listener's bug must not hide the news from the others
    }
  }
}
