/** Counts holders per key: the first acquire and the last release are the ones that act. */
export class RefCounts<K> {
  readonly #counts = new Map<K, number>();

  /** Adds a holder; `true` when it is the first. */
  acquire(key: K): boolean {
    const count = this.#counts.get(key) ?? 0;
    this.#counts.set(key, count + 1);
    return count === 0;
  }

  /** Drops a holder; `true` when it was the last (`false` for a key nobody holds). */
  release(key: K): boolean {
    const count = this.#counts.get(key) ?? 0;
    if (count > 1) this.#counts.set(key, count - 1);
    else this.#counts.delete(key);
    return count === 1;
  }
}
