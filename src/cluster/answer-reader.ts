/**
 * Reads HTTP/1.1 answers off a socket for {@link ReplicaLink}: the status line and headers,
 * then the body as its framing says (Content-Length, chunked, or until the connection ends).
 * It reads what a replica's node:http server writes; anything it cannot read is an error,
 * never a guess.
 */

/** What an {@link AnswerReader} reports, in order: one head, data, then end or error. */
export interface AnswerSink {
  /** The status and the headers as a flat list of names (lower case) and values. */
  head(status: number, headers: string[]): void;
  data(chunk: Buffer): void;
  /** The answer is whole; `reusable` when the connection may carry another request. */
  end(reusable: boolean): void;
}

/** A head larger than this is refused (node:http's own default limit is 16 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line (with extensions) or a trailer line longer than this is refused. */
const MAX_LINE_BYTES = 8 * 1024;
const CRLF = Buffer.from("\r\n");
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const STATUS_START = "HTTP/1.";
const HEAD_END = Buffer.from("\r\n\r\n");

type State =
  | { kind: "head" }
  | { kind: "length"; left: number }
  | { kind: "chunk-size" }
  | { kind: "chunk-data"; left: number }
  | { kind: "chunk-end" }
  | { kind: "trailers" }
  | { kind: "until-close" }
  | { kind: "done" };

export class AnswerError extends Error {
  override name = "AnswerError";
}

export class AnswerReader {
  readonly #sink: AnswerSink;
  readonly #bodiless: boolean;
  #state: State = { kind: "head" };
  /** Bytes read but not used yet (a part of a head or of a line). */
  #held: Buffer | undefined;
  #keepAlive = true;

  /** `bodiless`: the request was a HEAD, whose answer has no body whatever its headers say. */
  constructor(sink: AnswerSink, bodiless = false) {
    this.#sink = sink;
    this.#bodiless = bodiless;
  }

  get done(): boolean {
    return this.#state.kind === "done";
  }

  /** Whether the answer has begun (a byte of it was read). */
  get begun(): boolean {
    return this.#held !== undefined || this.#state.kind !== "head";
  }

  /** Feeds bytes read from the socket; throws {@link AnswerError} on bytes it cannot read. */
  feed(chunk: Buffer): void {
    let bytes = this.#held === undefined ? chunk : Buffer.concat([this.#held, chunk]);
    this.#held = undefined;
    while (bytes.length > 0) {
      const state = this.#state;
      switch (state.kind) {
        case "head": {
          const end = bytes.indexOf(HEAD_END);
          if (end === -1) {
            if (bytes.length > MAX_HEAD_BYTES) throw new AnswerError("answer head too large");
            this.#checkStatusLine(bytes);
            this.#held = bytes;
            return;
          }
          this.#readHead(bytes.toString("latin1", 0, end));
          bytes = bytes.subarray(end + HEAD_END.length);
          break;
        }
        case "length": {
          const take = Math.min(state.left, bytes.length);
          state.left -= take;
          this.#sink.data(bytes.subarray(0, take));
          bytes = bytes.subarray(take);
          if (state.left === 0) this.#finish();
          break;
        }
        case "chunk-size": {
          const line = this.#line(bytes);
          if (line === undefined) return;
          bytes = bytes.subarray(line.length + CRLF.length);
          const hex = line.toString("latin1").split(";", 1)[0]!.trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(hex))
            throw new AnswerError(`bad chunk size ${JSON.stringify(hex)}`);
          const size = Number.parseInt(hex, 16);
          this.#state = size === 0 ? { kind: "trailers" } : { kind: "chunk-data", left: size };
          break;
        }
        case "chunk-data": {
          const take = Math.min(state.left, bytes.length);
          state.left -= take;
          this.#sink.data(bytes.subarray(0, take));
          bytes = bytes.subarray(take);
          if (state.left === 0) this.#state = { kind: "chunk-end" };
          break;
        }
        case "chunk-end": {
          if (bytes.length < CRLF.length) {
            this.#held = bytes;
            return;
          }
          if (!bytes.subarray(0, CRLF.length).equals(CRLF)) throw new AnswerError("chunk not ended by CRLF");
          bytes = bytes.subarray(CRLF.length);
          this.#state = { kind: "chunk-size" };
          break;
        }
        case "trailers": {
          // Trailers are read and dropped: node:http writes none unless asked.
          const line = this.#line(bytes);
          if (line === undefined) return;
          bytes = bytes.subarray(line.length + CRLF.length);
          if (line.length === 0) this.#finish();
          break;
        }
        case "until-close":
          this.#sink.data(bytes);
          return;
        case "done":
          // Bytes after a whole answer, to a request not sent yet: the connection is not sound.
          throw new AnswerError("bytes after the end of the answer");
      }
    }
  }

  /** The connection ended: the answer is whole only when its framing was "until close". */
  close(): boolean {
    if (this.#state.kind === "until-close") {
      this.#state = { kind: "done" };
      this.#sink.end(false);
    }
    return this.#state.kind === "done";
  }

  /** A whole line at the start of `bytes` (without its CRLF), or `undefined` (kept for later). */
  #line(bytes: Buffer): Buffer | undefined {
    const end = bytes.indexOf(CRLF);
    if (end !== -1) return bytes.subarray(0, end);
    if (bytes.length > MAX_LINE_BYTES) throw new AnswerError("line too long");
    this.#held = bytes;
    return undefined;
  }

  /**
   * Refuses a head that is not HTTP from its first bytes, before its end: a peer that is not an
   * HTTP server (or is out of step) may never send the blank line that ends a head, and the
   * request would wait on it for as long as the connection stays open.
   */
  #checkStatusLine(bytes: Buffer): void {
    const lineEnd = bytes.indexOf(CRLF);
    if (lineEnd !== -1) {
      const line = bytes.toString("latin1", 0, lineEnd);
      if (!STATUS_LINE.test(line))
        throw new AnswerError(`not an HTTP/1.x status line: ${JSON.stringify(line.slice(0, 40))}`);
      return;
    }
    const start = bytes.toString("latin1", 0, Math.min(bytes.length, STATUS_START.length));
    if (!STATUS_START.startsWith(start))
      throw new AnswerError(`not an HTTP/1.x status line: ${JSON.stringify(start)}`);
  }

  #readHead(text: string): void {
    const lines = text.split("\r\n");
    const status = STATUS_LINE.exec(lines[0]!);
    if (status === null)
      throw new AnswerError(`not an HTTP/1.x status line: ${JSON.stringify(lines[0]!.slice(0, 40))}`);
    const code = Number(status[2]);
    const headers: string[] = [];
    let length: string | undefined;
    let chunked = false;
    let connection = status[1] === "0" ? "close" : "keep-alive";
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      if (colon <= 0) throw new AnswerError(`bad header line ${JSON.stringify(line.slice(0, 40))}`);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers.push(name, value);
      if (name === "content-length") {
        if (length !== undefined && length !== value) throw new AnswerError("conflicting Content-Length");
        length = value;
      } else if (name === "transfer-encoding") chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      else if (name === "connection") connection = value.toLowerCase();
    }
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (code >= 100 && code < 200 && code !== 101) return;
    this.#keepAlive = connection.split(",").some((token) => token.trim() === "keep-alive");
    this.#sink.head(code, headers);
    if (this.#bodiless || code === 204 || code === 304 || code === 101) {
      this.#finish();
      return;
    }
    if (chunked) {
      this.#state = { kind: "chunk-size" };
      return;
    }
    if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new AnswerError(`bad Content-Length ${JSON.stringify(length)}`);
      const left = Number(length);
      if (left === 0) this.#finish();
      else this.#state = { kind: "length", left };
      return;
    }
    this.#keepAlive = false;
    this.#state = { kind: "until-close" };
  }

  #finish(): void {
    this.#state = { kind: "done" };
    this.#sink.end(this.#keepAlive);
  }
}
