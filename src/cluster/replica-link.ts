import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { AnswerError, AnswerReader } from "./answer-reader.js";

/**
 * HTTP/1.1 requests from one replica to another, over kept-alive connections.
 *
 * Our own rather than node:http's or undici's client: the replica hop is the whole cost of a
 * forwarded request. bench/replica-link-bench.ts sends what a replica forwards (a JSON-RPC POST,
 * an event-stream answer) to the same node:http owner through each client, in interleaved
 * rounds, against a raw socket as the floor. In five runs on a shared 2-vCPU machine: p50 of
 * sequential requests 1.38-1.44x the floor for this link, 1.67-1.74x for undici's
 * `Pool.dispatch` and 2.53-2.64x for node:http's keep-alive client (undici / this link per round:
 * medians 1.18-1.22, no round under 1.05); undici's CPU per request one at a time 1.20-1.38x
 * this link's, and with 8 in flight the same within the noise (0.94-1.06); node:http's about
 * twice this link's. Figures in docs/cluster-scaling.md. It speaks to one kind of peer only, a
 * replica's node:http server, so it needs no redirects, no proxies, no pipelining, and no
 * retries but one (a kept connection the owner had closed idle). The same malformed answers are
 * fed to it, undici and node:http in test/cluster/replica-link-malformed.test.ts.
 */

/** What a {@link ReplicaLink} request reports: one head, data, then end; or fail. */
export interface LinkHandler {
  head(status: number, headers: string[]): void;
  /** A part of the body; `false` pauses reading until {@link LinkControl.resume}. */
  data(chunk: Buffer): boolean | undefined;
  end(): void;
  /**
   * The request failed. `sent`: it may have reached the peer (a connection was open and the
   * request written), so what the peer did is unknown; otherwise nothing reached it.
   */
  fail(error: Error, sent: boolean): void;
}

export interface LinkRequest {
  method: string;
  /** Path and query. */
  path: string;
  /**
   * Headers to send. Values must hold no CR, LF or NUL: those of an IncomingMessage cannot
   * (node:http's parser ends a line there), and the caller checks its own.
   */
  headers: Record<string, string | string[]>;
  /** The body, sent with its Content-Length; none when absent. */
  body?: Buffer;
}

/** What the sender of a request can do while it runs. */
export interface LinkControl {
  /** Ends the request now (its connection closed): the peer sees it go. */
  abort(): void;
  /** Reads on after a {@link LinkHandler.data} that returned `false`. */
  resume(): void;
}

export interface LinkOptions {
  /** How long connecting may take before the peer counts as unreachable (ms). Default 3000. */
  connectTimeoutMs?: number;
  /** How long a connection is kept idle (ms), under the peer's keep-alive timeout. Default 30000. */
  idleMs?: number;
  /** Idle connections kept per peer. Default 64. */
  maxIdle?: number;
}

/** Headers the link writes itself. */
const OWN_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive"]);

export class ReplicaLink {
  readonly #connectTimeoutMs: number;
  readonly #idleMs: number;
  readonly #maxIdle: number;
  /** Idle connections per origin, the most recent last. */
  readonly #idle = new Map<string, IdleSocket[]>();

  constructor(options: LinkOptions = {}) {
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 3000;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#maxIdle = options.maxIdle ?? 64;
  }

  /** Sends `request` to `origin` (`http://host:port` or `https://...`); returns its abort. */
  send(origin: URL, request: LinkRequest, handler: LinkHandler): LinkControl {
    const head = this.#head(origin, request);
    let current: LinkControl | undefined;
    const attempt = (retry: boolean) => {
      current = this.#attempt(origin, head, request, handler, retry, attempt);
    };
    attempt(false);
    return { abort: () => current?.abort(), resume: () => current?.resume() };
  }

  /**
   * One attempt at a request: on a kept connection, or on a new one when `retry` (the kept one
   * closed before a byte of the answer came: the peer had closed it idle, so it never read the
   * request, and `again` sends it once more on a new connection). A retry that fails to connect
   * counts as sent: the first attempt might have reached a peer that died since.
   */
  #attempt(
    origin: URL,
    head: string,
    request: LinkRequest,
    handler: LinkHandler,
    retry: boolean,
    again: (retry: boolean) => void,
  ): LinkControl {
    const key = origin.origin;
    const reused = retry ? undefined : this.#idle.get(key)?.pop();
    reused?.unwatch();
    const socket = reused?.socket ?? this.#open(origin);
    let settled = false;
    let written = reused !== undefined;
    const reader = new AnswerReader(
      {
        head: (status, headers) => {
          if (!settled) handler.head(status, headers);
        },
        data: (chunk) => {
          // A slow reader holds the owner back, as a pipe would, rather than piling up here.
          if (!settled && handler.data(chunk) === false) socket.pause();
        },
        end: (reusable) => {
          if (settled) return;
          settled = true;
          detach();
          if (reusable) this.#park(key, socket);
          else discard(socket);
          handler.end();
        },
      },
      request.method === "HEAD",
    );
    const fail = (error: Error, aborting = false) => {
      if (settled) return;
      settled = true;
      detach();
      discard(socket);
      if (reused !== undefined && !reader.begun && !aborting && !(error instanceof AnswerError))
        return again(true);
      handler.fail(error, retry || written || reader.begun);
    };
    const onData = (chunk: Buffer) => {
      try {
        reader.feed(chunk);
      } catch (error) {
        fail(error as AnswerError);
      }
    };
    const onClose = () => {
      if (settled) return;
      if (!reader.close()) fail(new Error("the replica closed the connection before its answer was whole"));
    };
    const onError = (error: Error) => fail(error);
    let timer: NodeJS.Timeout | undefined;
    const detach = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("end", onClose);
      socket.off("close", onClose);
      socket.off("error", onError);
    };
    socket.on("data", onData);
    socket.on("end", onClose);
    socket.on("close", onClose);
    socket.on("error", onError);
    if (socket.connecting) {
      // A peer gone without a trace (its address now silent) must not hold the request for the
      // kernel's minutes of SYN retries.
      timer = setTimeout(
        () => fail(Object.assign(new Error("connect timeout"), { code: "MCPLEX_CONNECT_TIMEOUT" })),
        this.#connectTimeoutMs,
      );
      socket.once(origin.protocol === "https:" ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        written = true;
      });
    }
    // Written at once: a socket buffers what is written while it connects.
    socket.cork();
    socket.write(head, "latin1");
    if (request.body !== undefined && request.body.length > 0) socket.write(request.body);
    socket.uncork();
    return { abort: () => fail(new Error("aborted"), true), resume: () => socket.resume() };
  }

  /** Closes the idle connections. */
  close(): void {
    for (const sockets of this.#idle.values()) for (const idle of sockets) discard(idle.socket);
    this.#idle.clear();
  }

  #open(origin: URL): Socket {
    const port = Number(origin.port) || (origin.protocol === "https:" ? 443 : 80);
    const host = origin.hostname.replace(/^\[(.*)\]$/, "$1");
    const socket =
      origin.protocol === "https:"
        ? tlsConnect({ host, port, servername: host, ALPNProtocols: ["http/1.1"] })
        : netConnect({ host, port });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    return socket;
  }

  #head(origin: URL, request: LinkRequest): string {
    let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${origin.host}\r\n`;
    for (const name in request.headers) {
      if (OWN_HEADERS.has(name)) continue;
      const value = request.headers[name]!;
      if (typeof value === "string") head += `${name}: ${value}\r\n`;
      else for (const one of value) head += `${name}: ${one}\r\n`;
    }
    if (request.body !== undefined) head += `content-length: ${request.body.length}\r\n`;
    return `${head}\r\n`;
  }

  /** Keeps `socket` for the next request to `key`, until it closes or idles too long. */
  #park(key: string, socket: Socket): void {
    let sockets = this.#idle.get(key);
    if (sockets === undefined) {
      sockets = [];
      this.#idle.set(key, sockets);
    }
    if (sockets.length >= this.#maxIdle) {
      discard(socket);
      return;
    }
    // Bytes while idle are a peer out of step; an end or an error, a connection no longer usable.
    const drop = () => {
      const at = sockets.indexOf(idle);
      if (at !== -1) sockets.splice(at, 1);
      idle.unwatch();
      discard(socket);
    };
    const timer = setTimeout(drop, this.#idleMs);
    const idle: IdleSocket = {
      socket,
      unwatch: () => {
        clearTimeout(timer);
        socket.off("data", drop);
        socket.off("end", drop);
        socket.off("error", drop);
        socket.off("close", drop);
        socket.ref();
      },
    };
    socket.on("data", drop);
    socket.on("end", drop);
    socket.on("error", drop);
    socket.on("close", drop);
    // An idle connection keeps no process alive, and is read (it may have been paused).
    socket.unref();
    socket.resume();
    timer.unref();
    sockets.push(idle);
  }
}

/** Closes `socket`; an error it still reports then is of no interest (and must not throw). */
function discard(socket: Socket): void {
  socket.on("error", () => {});
  socket.destroy();
}

interface IdleSocket {
  socket: Socket;
  /** Stops watching it (it is taken for a request, or dropped). */
  unwatch(): void;
}
