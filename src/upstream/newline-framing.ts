import type { Writable } from "node:stream";

/**
 * Splits newline-delimited text into lines, as stdio MCP frames messages. A message
 * longer than `maxLength` is dropped whole (what came of it so far, and the rest when it
 * arrives) and reported once through `onOversize`.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOversize: () => void;
  readonly #maxLength: number;
  #buffer = "";
  #skipping = false;

  constructor(onLine: (line: string) => void, maxLength: number, onOversize: () => void) {
    this.#onLine = onLine;
    this.#maxLength = maxLength;
    this.#onOversize = onOversize;
  }

  push(chunk: string): void {
    const text = this.#buffer.length === 0 ? chunk : this.#buffer + chunk;
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      if (this.#skipping) this.#skipping = false;
      else if (newline > start) this.#onLine(text.slice(start, newline));
      start = newline + 1;
    }
    const rest = start === 0 ? text : text.slice(start);
    if (rest.length > this.#maxLength) {
      this.#onOversize();
      this.#buffer = "";
      this.#skipping = true;
      return;
    }
    this.#buffer = rest;
  }
}

/**
 * A write function that coalesces the writes of one tick into one string and one write
 * (flushed on the next tick): with many messages in flight this is the largest single
 * saving on a stdio path. One string, not cork/uncork, because a corked stream hands its
 * chunks to writev one by one, which cost more than the concatenation here. Writes stay
 * ordered.
 */
export function coalescingWriter(stream: Writable): (text: string) => void {
  let pending = "";
  const flush = () => {
    const text = pending;
    pending = "";
    if (!stream.destroyed) stream.write(text);
  };
  return (text) => {
    if (pending.length === 0) process.nextTick(flush);
    pending += text;
  };
}
