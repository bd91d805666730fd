import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { Gateway } from "../gateway/gateway.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { stringifyMessage } from "../protocol/messages.js";
import { parseErrorAnswer } from "../protocol/wire-error.js";
import { onExpiry } from "./authenticator.js";
import type { AdmissionRefusal, Caller } from "./caller.js";
import type { ConnectionLimits } from "./connection-limits.js";
import { type BudgetLease, budgetRefusal, type MemoryBudget } from "./memory-budget.js";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  421: "Misdirected Request",
  429: "Too Many Requests",
  503: "Service Unavailable",
};

/**
 * MCP over WebSocket at `/ws` (subprotocol `mcp`, one JSON-RPC message per text
 * frame): a session per socket, guarded like HTTP before the upgrade.
 */
export function attachWebSocketFront(
  gateway: Gateway,
  server: Server,
  options: {
    /** Admits the upgrade as /mcp admits a request: authenticator, Host/Origin, rate (shared in a cluster). */
    admit: (req: IncomingMessage) => Promise<Caller | AdmissionRefusal>;
    maxBytes: number;
    /** Requests in flight per connection, as HTTP's per client. */
    maxInFlight: number;
    /**
     * The memory budget shared with /mcp and /sse: a request holds its frame's size until its
     * answer is written out; past it a request is answered at once with an error.
     */
    budget: MemoryBudget;
    /** The server's connection caps: a connection past them is not upgraded. */
    connections?: ConnectionLimits;
  },
): { close(): void } {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxBytes,
    handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
  });
  // Headers the authenticator gives an upgrade's answer (a fresh DPoP nonce) ride on its 101.
  const answerHeaders = new WeakMap<IncomingMessage, Readonly<Record<string, string>>>();
  wss.on("headers", (lines: string[], req: IncomingMessage) => {
    const extra = answerHeaders.get(req);
    for (const name in extra) lines.push(`${name}: ${extra[name]}`);
  });
  const refuse = (socket: Duplex, status: number, reason: string, headers: Record<string, string> = {}) => {
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    const body = JSON.stringify({ error: reason });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nconnection: close\r\ncontent-type: application/json\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch(() => socket.destroy());
  });
  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    if ((req.url ?? "/").split("?")[0] !== "/ws") return refuse(socket, 404, "Not Found");
    const connections = options.connections;
    if (connections?.pastCaps(req.socket))
      return refuse(socket, 503, connections.refusal, { "retry-after": "1" });
    const caller = await options.admit(req);
    if ("status" in caller) return refuse(socket, caller.status, caller.message, caller.headers);
    // The client may have gone while it was being admitted.
    if (socket.destroyed) return;
    const protocols = String(req.headers["sec-websocket-protocol"] ?? "");
    if (!protocols.split(",").some((p) => p.trim() === "mcp")) {
      return refuse(socket, 400, "Bad Request (the mcp subprotocol is required)");
    }
    if (caller.responseHeaders !== undefined) answerHeaders.set(req, caller.responseHeaders);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const inFlight = new InFlight(options.maxInFlight);
      const session = gateway.openSession(
        {
          send(message) {
            if (ws.readyState !== WebSocket.OPEN) return;
            const id = message.method === undefined ? message.id : undefined;
            const text = stringifyMessage(message);
            // An answer stays in flight until written out: a client that does not read holds its
            // slots, and its share of the budget.
            if (inFlight.has(id)) {
              inFlight.charge(id, text.length);
              ws.send(text, () => inFlight.end(id));
            } else ws.send(text);
          },
          close() {
            ws.close(1000);
          },
        },
        {
          profile: caller.profile,
          mode: caller.mode,
          caller: caller.key,
          identity: caller.identity,
          front: "ws",
        },
      );
      ws.on("message", (data, isBinary) => {
        const text = isBinary ? Buffer.from(data as Buffer).toString("utf8") : data.toString();
        // Taken before parsing: the frame is already here, but what it becomes is not yet.
        const lease = options.budget.reserve(text.length);
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch (error) {
          lease?.release();
          ws.send(JSON.stringify(parseErrorAnswer(error)));
          return;
        }
        const refusal =
          lease === undefined ? overBudget(message, options.budget) : inFlight.admit(message, lease);
        if (refusal !== undefined) {
          lease?.release();
          ws.send(JSON.stringify(refusal));
          return;
        }
        session.receive(message);
        // Only a request waits for an answer; anything else has been passed on.
        if (lease !== undefined && !inFlight.holds(lease)) lease.release();
      });
      // A signed-in client's connection lasts as long as its token: then it reconnects with a fresh one.
      const unexpire = onExpiry(caller.identity, () =>
        ws.close(1008, "the access token expired; reconnect with a fresh one"),
      );
      ws.on("close", () => {
        unexpire();
        inFlight.clear();
        session.close();
      });
      ws.on("error", () => {
        inFlight.clear();
        session.close();
      });
    });
  };
  return {
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

type Id = string | number;

/** A request's id, when `message` is a request (a method and an id). */
function requestId(message: unknown): Id | undefined {
  const m = message as { id?: unknown; method?: unknown } | null;
  if (typeof m !== "object" || m === null || typeof m.method !== "string") return undefined;
  return typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
}

/**
 * The error answer to a request past the memory budget; `undefined` for other messages, which
 * pass (a notification or an answer to the server is not worth refusing, and holds nothing).
 */
function overBudget(message: unknown, budget: MemoryBudget): object | undefined {
  const id = requestId(message);
  if (id === undefined) return undefined;
  return { jsonrpc: "2.0", id, error: { code: ErrorCode.ServerError, message: budgetRefusal(budget) } };
}

/**
 * The requests of one connection that have no answer yet, bounded: past `max`, a request is
 * answered at once with an error. Each holds its share of the memory budget until its answer
 * is written. A request the client cancels gets no answer and leaves.
 */
class InFlight {
  readonly #ids = new Map<Id, BudgetLease[]>();
  readonly #leases = new Set<BudgetLease>();

  constructor(readonly max: number) {}

  has(id: unknown): id is Id {
    return (typeof id === "string" || typeof id === "number") && this.#ids.has(id);
  }

  /** Whether `lease` is held by a request waiting for its answer. */
  holds(lease: BudgetLease): boolean {
    return this.#leases.has(lease);
  }

  /** Counts a request in with its lease, or returns the error answer refusing it. */
  admit(message: unknown, lease: BudgetLease): object | undefined {
    const m = message as { method?: unknown; params?: { requestId?: unknown } } | null;
    if (typeof m === "object" && m !== null && m.method === "notifications/cancelled") {
      if (this.has(m.params?.requestId)) this.end(m.params.requestId);
      return undefined;
    }
    const id = requestId(message);
    if (id === undefined) return undefined;
    if (this.#leases.size >= this.max) {
      return {
        jsonrpc: "2.0",
        id,
        error: {
          code: ErrorCode.ServerError,
          message: `Too Many Requests: too many requests in flight on this connection (limit ${this.max}); wait for answers before sending more`,
        },
      };
    }
    this.#leases.add(lease);
    const same = this.#ids.get(id);
    if (same === undefined) this.#ids.set(id, [lease]);
    else same.push(lease);
    return undefined;
  }

  /** Charges an answer about to be written to the request it answers. */
  charge(id: Id, bytes: number): void {
    this.#ids.get(id)?.[0]?.charge(bytes);
  }

  /** The request `id` is answered (or cancelled): its slot and its share of the budget go back. */
  end(id: Id): void {
    const same = this.#ids.get(id);
    const lease = same?.shift();
    if (lease === undefined) return;
    if (same!.length === 0) this.#ids.delete(id);
    this.#leases.delete(lease);
    lease.release();
  }

  /** The connection closed: every share goes back. */
  clear(): void {
    for (const lease of this.#leases) lease.release();
    this.#leases.clear();
    this.#ids.clear();
  }
}
