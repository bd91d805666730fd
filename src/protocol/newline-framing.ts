/** `\n`, which UTF-8 never uses inside a character: a line can be found in bytes. */
const NEWLINE = 10;

/**
 * Splits newline-delimited text into lines, as stdio MCP frames messages, from string chunks
 * ({@link push}) or from bytes ({@link pushBytes}, what a pipe read below Node's streams gives).
 * A message longer than `maxLength` is dropped whole (what came of it so far, and the rest when
 * it arrives) and reported once through `onOversize`.
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
  /** The same, of byte chunks: copies, since a reader reuses its buffer. */
  #byteParts: Buffer[] = [];
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
    this.#grown(rest.length);
  }

  /**
   * The bytes `buffer[0, length)`, which the caller may reuse once this returns. The lines they
   * end are decoded as UTF-8 at once, in one string; the bytes after the last newline are kept
   * (copied) for the next call.
   */
  pushBytes(buffer: Buffer, length: number): void {
    const last = length === 0 ? -1 : buffer.lastIndexOf(NEWLINE, length - 1);
    if (last !== -1) {
      let text: string;
      if (this.#byteParts.length === 0) {
        text = buffer.toString("utf8", 0, last + 1);
      } else {
        this.#byteParts.push(buffer.subarray(0, last + 1));
        text = Buffer.concat(this.#byteParts).toString("utf8");
        this.#byteParts = [];
        this.#partsLength = 0;
      }
      this.push(text);
    }
    if (last + 1 === length || this.#skipping) return;
    this.#byteParts.push(Buffer.from(buffer.subarray(last + 1, length)));
    this.#grown(length - last - 1);
  }

  /** Counts `length` more of the unfinished line; past the limit, drops it and skips the rest. */
  #grown(length: number): void {
    this.#partsLength += length;
    if (this.#partsLength > this.#maxLength) {
      this.#onOversize();
      this.#parts = [];
      this.#byteParts = [];
      this.#partsLength = 0;
      this.#skipping = true;
    }
  }
}
