import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { Gateway } from "./gateway.js";
import type { Refusal } from "./http-front.js";
import type { Caller } from "./modern-post.js";
import { parseErrorAnswer } from "./protocol.js";

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
  options: { admit: (req: IncomingMessage) => Caller | Refusal; maxBytes: number },
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
      const session = gateway.openSession(
        {
          send(message) {
            if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
          },
          close() {
            ws.close(1000);
          },
        },
        caller.profile === undefined ? {} : { profile: caller.profile },
      );
      ws.on("message", (data, isBinary) => {
        let message: unknown;
        try {
          message = JSON.parse(isBinary ? Buffer.from(data as Buffer).toString("utf8") : data.toString());
        } catch (error) {
          ws.send(JSON.stringify(parseErrorAnswer(error)));
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
