import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { HttpFront } from "../../src/fronts/http-front.js";
import { configOf, fixture } from "../support/config.js";
import { type InProcessGateway, resultText, rev2026Request, startGateway } from "../support/gateway.js";

// The WebSocket front (`/ws`, subprotocol `mcp`) with the `ws` package as a raw client.

type Message = {
  id?: unknown;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** A raw WebSocket MCP client: sends JSON messages, awaits answers by id. */
class WsClient {
  readonly #pending = new Map<unknown, (m: Message) => void>();
  readonly notifications: Message[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(String(data)) as Message;
      const waiting = this.#pending.get(message.id);
      if (waiting !== undefined && message.method === undefined) {
        this.#pending.delete(message.id);
        waiting(message);
      } else {
        this.notifications.push(message);
      }
    });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const ws = new WebSocket(url, "mcp", { headers });
    await once(ws, "open");
    return new WsClient(ws);
  }

  request(message: { id: string | number } & Record<string, unknown>): Promise<Message> {
    return new Promise((done) => {
      this.#pending.set(message.id, done);
      this.ws.send(JSON.stringify(message));
    });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = once(this.ws, "close");
    this.ws.close();
    await closed;
  }
}

/** Why a WebSocket handshake was refused: the HTTP status and the body. */
function refusal(url: string, protocols: string[], headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((done, fail) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.on("open", () => {
      ws.close();
      fail(new Error("the handshake was accepted"));
    });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => (body += c));
      res.on("end", () => done({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    ws.on("error", () => {});
  });
}

let gw: InProcessGateway;
let guarded: HttpFront;
beforeAll(async () => {
  gw = await startGateway(configOf([fixture("fx")]));
  guarded = await gw.addFront({ tokens: [{ token: "ws-secret-0123456789" }] });
});
afterAll(() => gw?.stop());

describe("the WebSocket front", () => {
  it("serves a 2025 session: initialize, tools/list and tools/call", async () => {
    const client = await WsClient.open(gw.wsUrl);
    try {
      expect(client.ws.protocol).toBe("mcp");
      const init = await client.request({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ws", version: "1" } },
      });
      expect(init.result?.protocolVersion).toBe("2025-06-18");
      expect(init.result?.serverInfo).toMatchObject({ name: "mcplex" });
      client.ws.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      const list = await client.request({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      const names = ((list.result?.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
      expect(names).toContain("fx__echo");
      const call = await client.request({
        jsonrpc: "2.0",
        id: "three",
        method: "tools/call",
        params: { name: "fx__echo", arguments: { message: "over ws" } },
      });
      expect(resultText(call.result)).toBe("echo: over ws");
      expect(call.result?.resultType).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it("serves an enveloped 2026 tools/call without initialize", async () => {
    const client = await WsClient.open(gw.wsUrl);
    try {
      const call = await client.request(
        rev2026Request(9, "tools/call", { name: "fx__echo", arguments: { message: "2026" } }),
      );
      expect(call.result?.resultType).toBe("complete");
      expect(resultText(call.result)).toBe("echo: 2026");
      const unknown = await client.request(rev2026Request(10, "tools/call", { name: "fx__missing" }));
      expect(unknown.error?.code).toBe(-32602);
    } finally {
      await client.close();
    }
  });

  it("relays progress of a 2026 call on the same socket", async () => {
    const client = await WsClient.open(gw.wsUrl);
    try {
      const call = await client.request(
        rev2026Request(11, "tools/call", {
          name: "fx__slow",
          arguments: { ms: 200, step: 100 },
          _meta: { progressToken: "p-11" },
        }),
      );
      expect(resultText(call.result)).toBe("slept 200");
      const progress = client.notifications.filter((n) => n.method === "notifications/progress");
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect((progress[0] as { params: { progressToken: string } }).params.progressToken).toBe("p-11");
    } finally {
      await client.close();
    }
  });

  it("answers malformed JSON with -32700 and keeps the socket", async () => {
    const client = await WsClient.open(gw.wsUrl);
    try {
      const answered = new Promise<Message>((done) =>
        client.ws.once("message", (d) => done(JSON.parse(String(d)))),
      );
      client.ws.send("{not json");
      expect((await answered).error?.code).toBe(-32700);
      const call = await client.request(
        rev2026Request(12, "tools/call", { name: "fx__echo", arguments: { message: "ok" } }),
      );
      expect(resultText(call.result)).toBe("echo: ok");
    } finally {
      await client.close();
    }
  });

  it("refuses a handshake without the mcp subprotocol", async () => {
    const refused = await refusal(gw.wsUrl, ["graphql-ws"]);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/mcp subprotocol/);
    const none = await refusal(gw.wsUrl, []);
    expect(none.status).toBe(400);
  });

  it("refuses a handshake with a bad or missing token when tokens are configured", async () => {
    const bad = await refusal(guarded.wsUrl, ["mcp"], { authorization: "Bearer wrong" });
    expect(bad.status).toBe(401);
    expect(bad.headers["www-authenticate"]).toMatch(/^Bearer /);
    const missing = await refusal(guarded.wsUrl, ["mcp"]);
    expect(missing.status).toBe(401);
    const client = await WsClient.open(guarded.wsUrl, { authorization: "Bearer ws-secret-0123456789" });
    try {
      const call = await client.request(
        rev2026Request(1, "tools/call", { name: "fx__echo", arguments: { message: "authed" } }),
      );
      expect(resultText(call.result)).toBe("echo: authed");
    } finally {
      await client.close();
    }
  });

  it("refuses a handshake from a foreign Origin", async () => {
    const refused = await refusal(gw.wsUrl, ["mcp"], { origin: "http://evil.example.com" });
    expect(refused.status).toBe(403);
  });
});
