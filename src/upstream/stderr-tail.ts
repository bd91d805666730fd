/**
 * The last few kilobytes a server wrote to stderr, kept for error reports
 * ("failed to start: ... stderr: ...") without holding a chatty server's whole log.
 */
export class StderrTail {
  readonly #limit: number;
  #text = "";
  #listeners = new Set<(chunk: string) => void>();

  constructor(limit = 8192) {
    this.#limit = limit;
  }

  /** Appends output, dropping the oldest beyond the limit. */
  push(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > this.#limit * 2) this.#text = this.#text.slice(-this.#limit);
    for (const listener of this.#listeners) listener(chunk);
  }

  /** The retained tail, trimmed, at most `limit` characters. */
  text(): string {
    return this.#text.slice(-this.#limit).trim();
  }

  /** Subscribes to new output; returns the unsubscribe function. */
  onData(listener: (chunk: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
