/**
 * Splits newline-delimited text into lines, as stdio MCP frames messages. A message
 * longer than `maxLength` is dropped whole (what came of it so far, and the rest when it
 * arrives) and reported once through `onOversize`.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOversize: () => void;
  readonly #maxLength: number;
  /**
   * The unfinished line, in the chunks it came in: a long message arrives in many chunks,
   * and searching a concatenation for the newline would copy all of it at each chunk.
   */
  #parts: string[] = [];
  #partsLength = 0;
  #skipping = false;

  constructor(onLine: (line: string) => void, maxLength: number, onOversize: () => void) {
    this.#onLine = onLine;
    this.#maxLength = maxLength;
    this.#onOversize = onOversize;
  }

  push(chunk: string): void {
    let start = 0;
    for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
      const tail = chunk.slice(start, newline);
      const line = this.#parts.length === 0 ? tail : this.#parts.join("") + tail;
      this.#parts = [];
      this.#partsLength = 0;
      if (this.#skipping) this.#skipping = false;
      else if (line.length > 0) this.#onLine(line);
      start = newline + 1;
    }
    if (start === chunk.length || this.#skipping) return;
    const rest = start === 0 ? chunk : chunk.slice(start);
    this.#parts.push(rest);
    this.#partsLength += rest.length;
    if (this.#partsLength > this.#maxLength) {
      this.#onOversize();
      this.#parts = [];
      this.#partsLength = 0;
      this.#skipping = true;
    }
  }
}
