import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** Connections past the caps kept open for `/healthz` and `/readyz` only. */
export const PROBE_ROOM = 32;

/**
 * Default of {@link ConnectionLimitsOptions.maxConnectionsPerClient}: above what one client's
 * other limits let it use at once (256 calls, 64 streams, the GET streams of 1 000 sessions),
 * and a fifth of the default total, so that one address cannot take every place.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 2000;

/** Paths a connection past the caps may still ask for. */
const PROBES = new Set(["/healthz", "/readyz"]);

/** Options of {@link ConnectionLimits}. */
export interface ConnectionLimitsOptions {
  /** Open connections, all clients together. Default {@link defaultMaxConnections}. */
  maxConnections?: number;
  /** Open connections from one client address. Default {@link DEFAULT_MAX_CONNECTIONS_PER_CLIENT}. */
  maxConnectionsPerClient?: number;
}

/**
 * The default cap on open connections: 10 000, or three quarters of the process's file
 * descriptors when that is fewer, so that upstreams, files and probes keep descriptors of
 * their own (Linux says how many; elsewhere 10 000).
 */
export function defaultMaxConnections(): number {
  let limit = Number.POSITIVE_INFINITY;
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    if (Number.isSafeInteger(soft) && soft > 0) limit = soft;
  } catch {
    // not Linux: no limit known
  }
  return Math.max(1, Math.min(10_000, Math.floor(limit * 0.75)));
}

/**
 * Caps the open connections of an HTTP server, per client address and in all. A connection
 * past a cap is still taken, into a small room kept for probes: it is answered only for
 * `/healthz` and `/readyz` (anything else gets 503 with `Retry-After`, and it is closed), so a
 * load balancer's probe gets through while the caps are reached. When that room is full, its
 * oldest connection that has sent no request makes way for the new one.
 */
export class ConnectionLimits {
  readonly max: number;
  readonly maxPerClient: number;
  readonly #byAddress = new Map<string, number>();
  /** Past the caps, oldest first; the value says whether a request has come on it. */
  readonly #probeRoom = new Map<Socket, boolean>();
  #open = 0;
  #refused = 0;

  constructor(server: Server, options: ConnectionLimitsOptions = {}) {
    this.max = options.maxConnections ?? defaultMaxConnections();
    this.maxPerClient = options.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT;
    server.on("connection", (socket: Socket) => this.#admit(socket));
  }

  /** Connections open now within the caps (not counting the probe room). */
  get open(): number {
    return this.#open;
  }

  /** Connections past the caps so far: closed at once, made way for another, or answered 503. */
  get refused(): number {
    return this.#refused;
  }

  /**
   * Whether `req` may be served: always within the caps; past them, only a probe. Otherwise
   * answers it 503 itself, closing the connection, and returns `false`.
   */
  admit(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    const socket = req.socket;
    if (!this.#probeRoom.has(socket)) return true;
    this.#probeRoom.set(socket, true);
    res.shouldKeepAlive = false;
    if (PROBES.has(path)) return true;
    const body = JSON.stringify({ error: this.refusal });
    res.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "retry-after": "1",
    });
    res.end(body);
    return false;
  }

  /** Whether `socket` came past the caps (a WebSocket upgrade on it is refused 503). */
  pastCaps(socket: Socket): boolean {
    return this.#probeRoom.has(socket);
  }

  /** Why a connection past the caps is not served (as JSON `error`). */
  get refusal(): string {
    return (
      `Service Unavailable: too many open connections (at most ${this.max} in all and ` +
      `${this.maxPerClient} per client address); close idle ones or retry later`
    );
  }

  #admit(socket: Socket): void {
    const address = socket.remoteAddress ?? "";
    const mine = this.#byAddress.get(address) ?? 0;
    if (this.#open < this.max && mine < this.maxPerClient) {
      this.#open++;
      this.#byAddress.set(address, mine + 1);
      socket.once("close", () => {
        this.#open--;
        const left = (this.#byAddress.get(address) ?? 1) - 1;
        if (left === 0) this.#byAddress.delete(address);
        else this.#byAddress.set(address, left);
      });
      return;
    }
    this.#refused++;
    if (this.#probeRoom.size >= PROBE_ROOM) {
      const idle = [...this.#probeRoom].find(([, asked]) => !asked)?.[0];
      if (idle === undefined) {
        socket.destroy();
        return;
      }
      this.#probeRoom.delete(idle);
      idle.destroy();
    }
    this.#probeRoom.set(socket, false);
    socket.once("close", () => this.#probeRoom.delete(socket));
  }
}
