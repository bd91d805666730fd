import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { ErrorCode } from "../protocol/error-codes.js";
import { parseErrorAnswer } from "../protocol/wire-error.js";
import type { Gateway } from "./gateway.js";
import type { Refusal } from "./http-admission.js";
import type { Caller } from "./rev2026-post.js";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  421: "Misdirected Request",
  429: "Too Many Requests",
};

/**
 * MCP over WebSocket at `/ws` (subprotocol `mcp`, one JSON-RPC message per text
 * frame): a session per socket, guarded like HTTP before the upgrade.
 */
export function attachWebSocketFront(
  gateway: Gateway,
  server: Server,
  options: {
    admit: (req: IncomingMessage) => Caller | Refusal;
    maxBytes: number;
    /** Requests in flight per connection, as HTTP's per client. */
    maxInFlight: number;
  },
): { close(): void } {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxBytes,
    handleProtocols: (protocols) => (protocols.has("mcp") ? "mcp" : false),
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
    if ((req.url ?? "/").split("?")[0] !== "/ws") return refuse(socket, 404, "Not Found");
    const caller = options.admit(req);
    if ("status" in caller) return refuse(socket, caller.status, caller.message, caller.headers);
    const protocols = String(req.headers["sec-websocket-protocol"] ?? "");
    if (!protocols.split(",").some((p) => p.trim() === "mcp")) {
      return refuse(socket, 400, "Bad Request (the mcp subprotocol is required)");
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const inFlight = new InFlight(options.maxInFlight);
      const session = gateway.openSession(
        {
          send(message) {
            if (ws.readyState !== WebSocket.OPEN) return;
            const id = message.method === undefined ? message.id : undefined;
            // An answer stays in flight until written out: a client that does not read holds its slots.
            if (inFlight.has(id)) ws.send(JSON.stringify(message), () => inFlight.end(id));
            else ws.send(JSON.stringify(message));
          },
          close() {
            ws.close(1000);
          },
        },
        { profile: caller.profile, mode: caller.mode, caller: caller.key },
      );
      ws.on("message", (data, isBinary) => {
        let message: unknown;
        try {
          message = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString("utf8") : data.toString());
        } catch (error) {
          ws.send(JSON.stringify(parseErrorAnswer(error)));
          return;
        }
        const refusal = inFlight.admit(message);
        if (refusal !== undefined) {
          ws.send(JSON.stringify(refusal));
          return;
        }
        session.receive(message);
      });
      ws.on("close", () => session.close());
      ws.on("error", () => session.close());
    });
  });
  return {
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}

type Id = string | number;

/**
 * The requests of one connection that have no answer yet, bounded: past `max`, a request is
 * answered at once with an error. A request the client cancels gets no answer and leaves.
 */
class InFlight {
  readonly #ids = new Map<Id, number>();
  #count = 0;

  constructor(readonly max: number) {}

  has(id: unknown): id is Id {
    return (typeof id === "string" || typeof id === "number") && this.#ids.has(id);
  }

  /** Counts a request in, or returns the error answer refusing it. */
  admit(message: unknown): object | undefined {
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } } | null;
    if (typeof m !== "object" || m === null || typeof m.method !== "string") return undefined;
    if (m.method === "notifications/cancelled") {
      if (this.has(m.params?.requestId)) this.end(m.params.requestId);
      return undefined;
    }
    if (typeof m.id !== "string" && typeof m.id !== "number") return undefined;
    if (this.#count >= this.max) {
      return {
        jsonrpc: "2.0",
        id: m.id,
        error: {
          code: ErrorCode.ServerError,
          message: `Too Many Requests: too many requests in flight on this connection (limit ${this.max}); wait for answers before sending more`,
        },
      };
    }
    this.#count++;
    this.#ids.set(m.id, (this.#ids.get(m.id) ?? 0) + 1);
    return undefined;
  }

  end(id: Id): void {
    const left = (this.#ids.get(id) ?? 0) - 1;
    if (left < 0) return;
    this.#count--;
    if (left === 0) this.#ids.delete(id);
    else this.#ids.set(id, left);
  }
}
