/**
 * The HTTP side of the raw client: POSTs over kept-alive HTTP/1.1 sockets, written and read by
 * hand. Written here rather than taken from node:http or undici because the client shares the
 * pinned core with the target, and its own cost was the figure: against the bare echo, one call
 * at a time, node:http's client made 1.7k calls/s, undici's pool 2.2k and these sockets 6.0k
 * (6.8k, 5.9k and 2.9k at 64 in flight). It speaks what the targets answer a POST with: a body
 * of `content-length` bytes, or `transfer-encoding: chunked` (an SSE stream the target ends after
 * the answer), or a body that ends with the connection.
 */
import { connect, type Socket } from "node:net";

/** An answer: status, the headers it had (names in lower case), and its body as text. */
export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

interface Exchange {
  head: string;
  body: string;
  resolve: (r: RawResponse) => void;
  reject: (e: Error) => void;
}

const CRLF = "\r\n";

/** One kept-alive socket; one exchange on it at a time. */
class RawSocket {
  readonly #socket: Socket;
  #buffer = "";
  #current: Exchange | undefined;
  #closed = false;

  constructor(url: URL, onClose: (s: RawSocket) => void) {
    this.#socket = connect(Number(url.port), url.hostname);
    this.#socket.setNoDelay(true);
    // Headers and chunk sizes are ASCII; a body is decoded as UTF-8 once it is whole.
    this.#socket.setEncoding("latin1");
    this.#socket.on("data", (chunk: string) => {
      this.#buffer += chunk;
      this.#parse(false);
    });
    const gone = (error?: Error) => {
      if (this.#closed) return;
      this.#closed = true;
      this.#parse(true);
      const current = this.#current;
      this.#current = undefined;
      current?.reject(error ?? Object.assign(new Error("socket closed"), { code: "ECONNRESET" }));
      onClose(this);
    };
    this.#socket.on("error", gone);
    this.#socket.on("close", () => gone());
  }

  get closed(): boolean {
    return this.#closed;
  }

  send(exchange: Exchange): void {
    this.#current = exchange;
    this.#socket.write(exchange.head + exchange.body, "utf8");
  }

  close(): void {
    this.#socket.destroy();
  }

  /** Takes one whole response off the buffer, if it is there; `ended`: the socket closed. */
  #parse(ended: boolean): void {
    const current = this.#current;
    if (current === undefined) return;
    const headEnd = this.#buffer.indexOf(CRLF + CRLF);
    if (headEnd === -1) return;
    const lines = this.#buffer.slice(0, headEnd).split(CRLF);
    const status = Number(lines[0]!.split(" ")[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const start = headEnd + 4;
    let body: string | undefined;
    let end = 0;
    const length = headers.get("content-length");
    if (length !== undefined) {
      end = start + Number(length);
      if (this.#buffer.length >= end) body = this.#buffer.slice(start, end);
    } else if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
      const parts: string[] = [];
      let at = start;
      for (;;) {
        const sizeEnd = this.#buffer.indexOf(CRLF, at);
        if (sizeEnd === -1) break;
        const size = Number.parseInt(this.#buffer.slice(at, sizeEnd), 16);
        if (this.#buffer.length < sizeEnd + 2 + size + 2) break;
        if (size === 0) {
          body = parts.join("");
          end = sizeEnd + 4;
          break;
        }
        parts.push(this.#buffer.slice(sizeEnd + 2, sizeEnd + 2 + size));
        at = sizeEnd + 2 + size + 2;
      }
    } else if (status === 202 || status === 204 || status === 304) {
      body = "";
      end = start;
    } else if (ended) {
      body = this.#buffer.slice(start);
      end = this.#buffer.length;
    }
    if (body === undefined) return;
    this.#buffer = this.#buffer.slice(end);
    this.#current = undefined;
    current.resolve({ status, headers, body: Buffer.from(body, "latin1").toString("utf8") });
    if (headers.get("connection")?.toLowerCase() === "close") this.close();
  }
}

/** Up to `max` kept-alive sockets to `url`'s host; exchanges wait for a free one. */
export class RawHttpPool {
  readonly #url: URL;
  readonly #max: number;
  readonly #idle: RawSocket[] = [];
  readonly #waiting: Exchange[] = [];
  #open = 0;
  #closed = false;

  constructor(url: URL, max: number) {
    this.#url = url;
    this.#max = max;
  }

  /** POSTs `body` to the URL's path with `headers` (content-length and host added). */
  post(body: string, headers: Record<string, string>): Promise<RawResponse> {
    if (this.#closed) return Promise.reject(new Error("the client is closed"));
    let head = `POST ${this.#url.pathname} HTTP/1.1${CRLF}host: ${this.#url.host}${CRLF}`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}${CRLF}`;
    head += `content-length: ${Buffer.byteLength(body)}${CRLF}${CRLF}`;
    return new Promise((resolve, reject) => {
      const exchange: Exchange = { head, body, resolve, reject };
      const s = this.#take();
      if (s === undefined) this.#waiting.push(exchange);
      else this.#sendOn(s, exchange);
    });
  }

  close(): void {
    this.#closed = true;
    for (const s of this.#idle.splice(0)) s.close();
    for (const w of this.#waiting.splice(0)) w.reject(new Error("the client is closed"));
  }

  #take(): RawSocket | undefined {
    while (this.#idle.length > 0) {
      const s = this.#idle.pop()!;
      if (!s.closed) return s;
    }
    if (this.#open >= this.#max) return undefined;
    this.#open++;
    return new RawSocket(this.#url, () => {
      this.#open--;
      // A waiting exchange gets the room the closed socket leaves.
      const waiting = this.#waiting.shift();
      if (waiting !== undefined) this.#dispatch(waiting);
    });
  }

  /** The socket `s` is free: the next waiting exchange goes on it, or it idles. */
  #next(s: RawSocket | undefined): void {
    if (s === undefined || s.closed || this.#closed) {
      s?.close();
      return;
    }
    const waiting = this.#waiting.shift();
    if (waiting === undefined) {
      this.#idle.push(s);
      return;
    }
    this.#sendOn(s, waiting);
  }

  #dispatch(exchange: Exchange): void {
    const s = this.#take();
    if (s === undefined) this.#waiting.unshift(exchange);
    else this.#sendOn(s, exchange);
  }

  #sendOn(s: RawSocket, exchange: Exchange): void {
    const resolve = exchange.resolve;
    exchange.resolve = (r) => {
      resolve(r);
      this.#next(s);
    };
    s.send(exchange);
  }
}
