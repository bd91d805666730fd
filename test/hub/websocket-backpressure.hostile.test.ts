import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { attackSize, reportFigure } from "../support/hostile.js";

// Large messages to a WebSocket server that has stopped reading: what waits in the socket is
// bounded, past it a large message is refused with a queue-full error, a small one passes.

const MESSAGES = attackSize(32, 256);
let wss: WebSocketServer;
let url: string;

beforeAll(async () => {
  wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: () => "mcp" });
  // A server that takes the connection and then reads nothing.
  wss.on("connection", (_ws, request) => (request.socket as Socket).pause());
  await new Promise((r) => wss.once("listening", r));
  url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  for (const client of wss.clients) client.terminate();
  await new Promise((r) => wss.close(r));
});

describe("WebSocket upstream transport to a server that does not read", () => {
  it("refuses large messages past its queue with a clear error and still takes small ones", async () => {
    const transport = new WebSocketClientTransport({ url, server: "stalled" });
    await transport.start();
    try {
      const data = "z".repeat(4_000_000);
      const outcomes = await Promise.all(
        Array.from({ length: MESSAGES }, (_, id) =>
          transport
            .send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t", arguments: { data } } })
            .then(
              () => "sent",
              (error: Error) => error.message,
            ),
        ),
      );
      const refused = outcomes.filter((o) => o !== "sent");
      reportFigure("websocket queue", `${MESSAGES} x 4 MB to a stalled server: ${refused.length} refused`);
      expect(refused.length).toBeGreaterThan(0);
      for (const message of refused) expect(message).toMatch(/^stalled: write queue full: .* 32 MiB limit/);
      await expect(transport.send({ jsonrpc: "2.0", id: "small", method: "ping" })).resolves.toBeUndefined();
    } finally {
      await transport.close();
    }
  }, 60_000);
});
