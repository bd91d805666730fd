import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Channel, ClientSession, WireMessage } from "./client-session.js";
import type { Gateway } from "./gateway.js";
import { HttpExchange, sendRpcError } from "./http-exchange.js";
import type { Caller } from "./modern-post.js";

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
    this.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
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
  session: ClientSession;
  channel: HttpSessionChannel;
  profile: string | undefined;
  lastUsed: number;
}

/** 2025 Streamable HTTP sessions (`Mcp-Session-Id`), idle ones closed after `idleMs`. */
export class LegacyHttpSessions {
  readonly #gateway: Gateway;
  readonly #sessions = new Map<string, Entry>();
  readonly #idleMs: number;
  readonly #sweep: NodeJS.Timeout;

  constructor(gateway: Gateway, options: { idleMs?: number } = {}) {
    this.#gateway = gateway;
    this.#idleMs = options.idleMs ?? 30 * 60_000;
    this.#sweep = setInterval(() => this.#closeIdle(), Math.min(this.#idleMs, 60_000));
    this.#sweep.unref();
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** A POST carrying one 2025 message. */
  post(req: IncomingMessage, res: ServerResponse, message: WireMessage, caller: Caller): void {
    const sessionId = header(req, "mcp-session-id");
    const { id, method } = message;
    const validId = (typeof id === "string" && id !== "") || typeof id === "number";
    if (typeof method !== "string" && !(id !== undefined && ("result" in message || "error" in message))) {
      sendRpcError(res, 400, validId ? id : null, -32600, "Invalid Request: a request needs a method");
      return;
    }
    if (typeof method === "string" && id !== undefined && !validId) {
      sendRpcError(res, 400, null, -32600, "Invalid Request: id must be a non-empty string or a number");
      return;
    }
    const isRequest = typeof method === "string" && id !== undefined;
    if (sessionId === undefined) {
      if (message.method !== "initialize") {
        sendRpcError(
          res,
          400,
          message.id,
          -32000,
          "Bad Request: Mcp-Session-Id header is required (send initialize first)",
        );
        return;
      }
      const entry = this.#open(caller.profile);
      this.#exchange(entry, res, message, caller, { "mcp-session-id": entry.id });
      return;
    }
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined) {
      sendRpcError(
        res,
        404,
        message.id,
        -32001,
        "Session not found: it expired or was closed; initialize again",
      );
      return;
    }
    if (entry.profile !== caller.profile) {
      sendRpcError(res, 403, message.id, -32000, "Forbidden: this session belongs to another token");
      return;
    }
    entry.lastUsed = Date.now();
    if (!isRequest) {
      entry.session.receive(message);
      res.writeHead(202).end();
      return;
    }
    this.#exchange(entry, res, message, caller, {});
  }

  #exchange(
    entry: Entry & { id?: string },
    res: ServerResponse,
    message: WireMessage,
    caller: Caller,
    headers: Record<string, string>,
  ): void {
    const id = message.id as Id;
    const exchange = new HttpExchange(res, { sseAllowed: caller.sseAllowed, headers });
    entry.channel.exchanges.set(id, exchange);
    res.on("close", () => {
      if (exchange.done) return;
      // The client went away mid-request: that is its cancellation.
      entry.channel.exchanges.delete(id);
      entry.session.receive({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
    });
    entry.session.receive(message);
  }

  #open(profile: string | undefined): Entry & { id: string } {
    const id = randomUUID();
    const channel = new HttpSessionChannel();
    const session = this.#gateway.openSession(channel, profile === undefined ? {} : { profile });
    const entry = { id, session, channel, profile, lastUsed: Date.now() };
    channel.onClose = () => this.#sessions.delete(id);
    this.#sessions.set(id, entry);
    return entry;
  }

  /** GET: the session's standalone SSE stream for messages tied to no request. */
  get(req: IncomingMessage, res: ServerResponse, caller: Caller): void {
    const entry = this.#find(req, res, caller);
    if (entry === undefined) return;
    if (entry.channel.stream !== undefined) {
      sendRpcError(res, 409, null, -32000, "Conflict: this session already has an open stream");
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    entry.channel.stream = res;
    res.on("close", () => {
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
      sendRpcError(res, 400, null, -32000, "Bad Request: Mcp-Session-Id header is required");
      return undefined;
    }
    const entry = this.#sessions.get(sessionId);
    if (entry === undefined || entry.profile !== caller.profile) {
      sendRpcError(res, 404, null, -32001, "Session not found");
      return undefined;
    }
    entry.lastUsed = Date.now();
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
