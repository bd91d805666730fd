import type { IncomingMessage, ServerResponse } from "node:http";
import type { Channel, ClientSession, WireMessage } from "../gateway/client-session.js";
import type { Gateway } from "../gateway/gateway.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { stringifyMessage } from "../protocol/messages.js";
import { onExpiry } from "./authenticator.js";
import { type Caller, sessionRefusal } from "./caller.js";
import { LOCAL_SESSIONS, type SessionDirectory } from "./cluster-link.js";
import { HttpExchange, sendRpcError } from "./http-exchange.js";

type Id = string | number;

/**
 * A 2025 session's messages over HTTP: what belongs to a POSTed request goes on that
 * POST's answer (JSON, or SSE when more than the response comes); the rest goes on the
 * session's GET stream.
 */
class HttpSessionChannel implements Channel {
  readonly exchanges = new Map<Id, HttpExchange>();
  stream: ServerResponse | undefined;
  onClose: (() => void) | undefined;

  send(message: WireMessage, related?: Id): boolean {
    if (related !== undefined) {
      const exchange = this.exchanges.get(related);
      if (exchange !== undefined) {
        if (message.method === undefined && message.id === related) {
          this.exchanges.delete(related);
          exchange.finish(message);
          return true;
        }
        if (exchange.canStream) {
          exchange.event(message);
          return true;
        }
        // A JSON-only POST cannot carry it: the standalone stream may.
      }
    }
    // Not tied to an open request: the standalone stream, if the client opened one.
    if (this.stream === undefined) return false;
    this.stream.write(`event: message\ndata: ${stringifyMessage(message)}\n\n`);
    return true;
  }

  close(): void {
    for (const exchange of this.exchanges.values()) exchange.end();
    this.exchanges.clear();
    this.stream?.end();
    this.stream = undefined;
    this.onClose?.();
  }
}

interface Entry {
  id: string;
  session: ClientSession;
  channel: HttpSessionChannel;
  profile: string | undefined;
  /** The client it counts against: its token, or its address without tokens. */
  key: string;
  lastUsed: number;
}

/** Options of {@link Rev2025HttpSessions}. */
export interface Rev2025HttpSessionOptions {
  /** Sessions unused this long are closed. Default 30 minutes. */
  idleMs?: number;
  /** Sessions open at once, all clients together. Default 10 000. */
  maxSessions?: number;
  /** Sessions open at once per client (token, or address without tokens). Default 1 000. */
  maxSessionsPerClient?: number;
  /** Told when a cap evicted a session or refused a new one (for metrics). */
  onLimit?: (outcome: "evicted" | "refused") => void;
  /** Mints session ids (one replica of several: ids that name it). Default: random UUIDs. */
  directory?: SessionDirectory;
}

/**
 * 2025 Streamable HTTP sessions (`Mcp-Session-Id`), idle ones closed after `idleMs`. Capped per
 * client and in total: a new session past a cap evicts the longest idle one (no request in
 * progress, no open stream), or is refused when there is none.
 */
export class Rev2025HttpSessions {
  readonly #gateway: Gateway;
  /** Least recently used first (an entry is moved to the end when used). */
  readonly #sessions = new Map<string, Entry>();
  /** The same entries by client, also least recently used first. */
  readonly #byClient = new Map<string, Map<string, Entry>>();
  readonly #idleMs: number;
  readonly #max: number;
  readonly #maxPerClient: number;
  readonly #onLimit: ((outcome: "evicted" | "refused") => void) | undefined;
  readonly #directory: SessionDirectory;
  readonly #sweep: NodeJS.Timeout;

  constructor(gateway: Gateway, options: Rev2025HttpSessionOptions = {}) {
    this.#gateway = gateway;
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#max = options.maxSessions ?? 10_000;
    this.#maxPerClient = options.maxSessionsPerClient ?? 1_000;
    this.#onLimit = options.onLimit;
    this.#directory = options.directory ?? LOCAL_SESSIONS;
    this.#sweep = setInterval(() => this.#closeIdle(), Math.min(this.#idleMs, 60_000));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** A POST carrying one 2025 message. */
  post(
    req: IncomingMessage,
    res: ServerResponse,
    message: WireMessage,
    caller: Caller & { key: string },
  ): void {
    const sessionId = header(req, "mcp-session-id");
    const { id, method } = message;
    const validId = (typeof id === "string" && id !== "") || typeof id === "number";
    if (typeof method !== "string" && !(id !== undefined && ("result" in message || "error" in message))) {
      sendRpcError(
        res,
        400,
        validId ? id : null,
        ErrorCode.InvalidRequest,
        "Invalid Request: a request needs a method",
      );
      return;
    }
    if (typeof method === "string" && id !== undefined && !validId) {
      sendRpcError(
        res,
        400,
        null,
        ErrorCode.InvalidRequest,
        "Invalid Request: id must be a non-empty string or a number",
      );
      return;
    }
    const isRequest = typeof method === "string" && id !== undefined;
    if (sessionId === undefined) {
      if (message.method !== "initialize") {
        sendRpcError(
          res,
          400,
          message.id,
          ErrorCode.ServerError,
          "Bad Request: Mcp-Session-Id header is required (send initialize first)",
        );
        return;
      }
      if (!isRequest) {
        // A notification named initialize opens nothing: nothing would ever answer it.
        sendRpcError(
          res,
          400,
          null,
          ErrorCode.InvalidRequest,
          "Invalid Request: initialize is a request and needs an id",
        );
        return;
      }
      const refusal = this.#makeRoom(caller.key);
      if (refusal !== undefined) {
        this.#onLimit?.("refused");
        sendRpcError(res, refusal.status, message.id, ErrorCode.ServerError, refusal.message);
        return;
      }
      const entry = this.#open(caller);
      this.#exchange(entry, res, message, caller, { "mcp-session-id": entry.id });
      return;
    }
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined) {
      sendRpcError(
        res,
        404,
        message.id,
        ErrorCode.SessionNotFound,
        "Session not found: it expired or was closed; initialize again",
      );
      return;
    }
    const refusal = sessionRefusal(
      { profile: entry.profile, key: entry.key, identity: entry.session.identity },
      caller,
    );
    if (refusal !== undefined) {
      sendRpcError(res, 403, message.id, ErrorCode.ServerError, refusal);
      return;
    }
    this.#touch(entry);
    // Each POST is admitted anew: a token the client renewed (a step-up's new scopes) counts
    // from its first request, not only in sessions opened after it.
    if (caller.key === entry.key && caller.identity !== undefined) entry.session.identity = caller.identity;
    if (!isRequest) {
      entry.session.receive(message);
      res.writeHead(202).end();
      return;
    }
    this.#exchange(entry, res, message, caller);
  }

  #exchange(
    entry: Entry & { id?: string },
    res: ServerResponse,
    message: WireMessage,
    caller: Caller,
    headers?: Record<string, string>,
  ): void {
    const id = message.id as Id;
    const exchange = new HttpExchange(res, {
      sseAllowed: caller.sseAllowed,
      headers,
      lease: caller.lease,
      challenge: caller.challenge,
    });
    entry.channel.exchanges.set(id, exchange);
    res.on("close", () => {
      if (exchange.done) return;
      // The client went away mid-request: that is its cancellation.
      entry.channel.exchanges.delete(id);
      entry.session.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
    });
    entry.session.receive(message);
  }

  #open(caller: Caller & { key: string }): Entry {
    const { profile, key } = caller;
    const id = this.#directory.mint();
    const channel = new HttpSessionChannel();
    const session = this.#gateway.openSession(channel, {
      id,
      profile,
      mode: caller.mode,
      caller: key,
      identity: caller.identity,
      front: "http",
    });
    const entry = { id, session, channel, profile, key, lastUsed: Date.now() };
    channel.onClose = () => this.#forget(entry);
    this.#sessions.set(id, entry);
    const mine = this.#byClient.get(key) ?? new Map<string, Entry>();
    this.#byClient.set(key, mine);
    mine.set(id, entry);
    return entry;
  }

  #forget(entry: Entry): void {
    this.#sessions.delete(entry.id);
    const mine = this.#byClient.get(entry.key);
    mine?.delete(entry.id);
    if (mine?.size === 0) this.#byClient.delete(entry.key);
  }

  /** Marks a session used now: it moves to the most recently used end. */
  #touch(entry: Entry): void {
    entry.lastUsed = Date.now();
    this.#sessions.delete(entry.id);
    this.#sessions.set(entry.id, entry);
    const mine = this.#byClient.get(entry.key);
    mine?.delete(entry.id);
    mine?.set(entry.id, entry);
  }

  /** Evicts what a new session of `key` needs evicted, or says why it cannot be opened. */
  #makeRoom(key: string): { status: number; message: string } | undefined {
    const mine = this.#byClient.get(key);
    if (mine !== undefined && mine.size >= this.#maxPerClient && !this.#evictFrom(mine)) {
      return {
        status: 429,
        message: `Too Many Requests: ${mine.size} sessions open for this client, all busy (limit ${this.#maxPerClient}); end unused sessions with DELETE`,
      };
    }
    if (this.#sessions.size >= this.#max && !this.#evictFrom(this.#sessions)) {
      return {
        status: 503,
        message: `Service Unavailable: the gateway holds its most sessions, all busy (limit ${this.#max}); retry later`,
      };
    }
    return undefined;
  }

  /** Closes the longest idle session of `entries` that is not busy; whether there was one. */
  #evictFrom(entries: Map<string, Entry>): boolean {
    for (const entry of entries.values()) {
      if (entry.channel.exchanges.size > 0 || entry.channel.stream !== undefined) continue;
      entry.session.close();
      this.#onLimit?.("evicted");
      return true;
    }
    return false;
  }

  /** GET: the session's standalone SSE stream for messages tied to no request. */
  get(req: IncomingMessage, res: ServerResponse, caller: Caller): void {
    const entry = this.#find(req, res, caller);
    if (entry === undefined) return;
    if (entry.channel.stream !== undefined) {
      sendRpcError(
        res,
        409,
        null,
        ErrorCode.ServerError,
        "Conflict: this session already has an open stream",
      );
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    entry.channel.stream = res;
    // A signed-in client's stream lasts as long as its token (each POST is checked on its own).
    const unexpire = onExpiry(caller.identity, () => res.end());
    res.on("close", () => {
      unexpire();
      if (entry.channel.stream === res) entry.channel.stream = undefined;
    });
  }

  /** DELETE: the client ends its session. */
  delete(req: IncomingMessage, res: ServerResponse, caller: Caller): void {
    const entry = this.#find(req, res, caller);
    if (entry === undefined) return;
    entry.session.close();
    res.writeHead(200).end();
  }

  #find(req: IncomingMessage, res: ServerResponse, caller: Caller): Entry | undefined {
    const sessionId = header(req, "mcp-session-id");
    if (sessionId === undefined) {
      sendRpcError(res, 400, null, ErrorCode.ServerError, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    const entry = this.#sessions.get(sessionId);
    if (
      entry === undefined ||
      sessionRefusal({ ...entry, identity: entry.session.identity }, caller) !== undefined
    ) {
      sendRpcError(res, 404, null, ErrorCode.SessionNotFound, "Session not found");
      return undefined;
    }
    this.#touch(entry);
    return entry;
  }

  #closeIdle(): void {
    const now = Date.now();
    for (const entry of this.#sessions.values()) {
      if (now - entry.lastUsed > this.#idleMs && entry.channel.exchanges.size === 0) entry.session.close();
    }
  }

  close(): void {
    clearInterval(this.#sweep);
    for (const entry of [...this.#sessions.values()]) entry.session.close();
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}
