import { type OnReadOpts, Socket, type SocketConstructorOpts } from "node:net";
import type { Readable } from "node:stream";

// Stdio framing: newline-delimited messages, read from a pipe below Node's streams
// ({@link takeOverPipe}) and split into lines ({@link LineSplitter}).

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

/** Bytes read at once: the one buffer each reader reads into, every time. */
const READ_BUFFER_BYTES = 64 * 1024;

/** Receives what one read gave: `buffer[0, length)`, valid until it returns (the buffer is reused). */
export type OnBytes = (buffer: Buffer, length: number) => void;

/** What a `net.Socket` keeps of its libuv stream (Node's own field; see {@link takeOverPipe}). */
interface StreamHandle {
  readStop(): number;
  useUserBuffer(buffer: Uint8Array): void;
  reading?: boolean;
}

/** The options `net.Socket` takes (`onread` as `socket.connect` documents it, and a handle). */
type ReaderOptions = SocketConstructorOpts & { onread: OnReadOpts; handle?: StreamHandle };

/**
 * Reads the pipe or socket behind `stream` (a child process's `stdout`, `process.stdin`) below
 * Node's Readable: a `net.Socket` with the `onread` option, which reads into one buffer for
 * every read and hands each read to `onBytes` with no stream on the way. Through a Readable,
 * each read was a 64 KiB buffer allocated and freed, a chunk pushed and decoded, a `data` event
 * and a `nextTick` (callgrind: about 6k instructions a read, with the collections the buffers
 * caused). The new socket pauses and resumes as any and ends with `end` and `close`.
 *
 * It takes the libuv handle of the socket Node made: `child_process` gives no way to spawn with
 * the `onread` option, and the stream `process.stdin` must stay the one owner of file
 * descriptor 0 (opening the descriptor again fails with EEXIST as soon as anything reads
 * `process.stdin`, which importing `node:process` as a module does). What the stream had read already goes to `onBytes` first; the stream itself
 * is destroyed once the new reader closes, so that the child's `close` event still comes.
 * Returns `undefined`, leaving the stream as it was, when it is not such a socket (any more).
 */
export function takeOverPipe(stream: Readable, onBytes: OnBytes): Socket | undefined {
  if (!(stream instanceof Socket) || stream.destroyed || stream.readableEnded) return undefined;
  const owner = stream as Socket & { _handle?: StreamHandle | null };
  const handle = owner._handle;
  if (typeof handle?.readStop !== "function" || typeof handle.useUserBuffer !== "function") return undefined;
  // What it read before it was taken over (a process spawned ahead may have written already).
  const before = stream.read() as Buffer | string | null;
  handle.readStop();
  handle.reading = false;
  owner._handle = null;
  const options: ReaderOptions = { handle, readable: true, writable: false, onread: reader(onBytes) };
  const taken = new Socket(options);
  if (before !== null) {
    const bytes = typeof before === "string" ? Buffer.from(before) : before;
    onBytes(bytes, bytes.length);
  }
  taken.once("close", () => stream.destroy());
  return taken;
}

function reader(onBytes: OnBytes): OnReadOpts {
  return {
    buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
    callback: (length, buffer) => {
      onBytes(buffer as Buffer, length);
      return true;
    },
  };
}
