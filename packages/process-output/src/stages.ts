/** Writes of a spill file in stages (`launch-native`'s O_DIRECT writer); what it holds is overlaid on reads. */
export interface SpillStages {
  /** Why writing failed: bytes from then on are not in the file. */
  readonly error: Error | undefined
  /** Memory it holds: the stage being filled and those in flight. */
  readonly heldBytes: number
  write(bytes: Buffer): void
  /** Copies what it holds of `[offset, offset + into.length)` over `into`. */
  overlay(into: Buffer, offset: number): void
  flush(): void
  /** Resolves once the file holds every byte appended so far. */
  drained(): Promise<void>
  close(): void
}
