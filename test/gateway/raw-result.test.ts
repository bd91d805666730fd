import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type HttpFront, startHttpFront } from "../../src/fronts/http-front.js";
import { serveGatewayStdio } from "../../src/fronts/stdio-front.js";
import { Gateway } from "../../src/gateway/gateway.js";
import type { Interceptor, JsonObject } from "../../src/hub/call-pipeline.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, stdio } from "../support/config.js";

// A tool's answer that no layer reads is relayed as the text its server wrote (a RawJson), not
// parsed and written again; a layer that reads results still gets them parsed.

/** What the server answers, as JSON.stringify would never write it: spaces, `text` first, escapes. */
const VERBATIM_RESULT =
  '{"content": [ {"text": "caf\\u00e9 \\"quoted\\" \\/ ok", "type": "text"} ], "isError": false}';

let hub: Hub;
let gateway: Gateway;
let front: HttpFront;
beforeAll(async () => {
  const server = stdio("vb", process.execPath, [
    "test/fixtures/servers/verbatim-server.mjs",
    VERBATIM_RESULT,
  ]);
  // An empty result, with a space inside: the 2026 members go in with no comma before them.
  const empty = stdio("empty", process.execPath, ["test/fixtures/servers/verbatim-server.mjs", "{ }"]);
  hub = new Hub({ config: configOf([server, empty]) });
  const starting = hub.start();
  gateway = new Gateway(hub, { ready: starting });
  await starting;
  front = await startHttpFront(gateway, { port: 0 });
});
afterAll(async () => {
  await front.close();
  gateway.close();
  await hub.close();
});

/** A 2025 stdio session on the gateway, read line by line as its client reads it. */
function session() {
  const input = new PassThrough();
  const output = new PassThrough();
  const front = serveGatewayStdio(gateway, { input, output });
  const waiting = new Map<number, (line: string) => void>();
  let buffer = "";
  output.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const id = (JSON.parse(line) as { id?: number }).id;
      if (id !== undefined) waiting.get(id)?.(line);
    }
  });
  let ids = 0;
  /** Sends a request and resolves with the line that answers it, as written. */
  const request = (method: string, params: JsonObject) =>
    new Promise<string>((resolve) => {
      const id = ++ids;
      waiting.set(id, resolve);
      input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  return { request, close: () => front.session.close() };
}

async function initialized() {
  const client = session();
  await client.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw-result-test", version: "1" },
  });
  return client;
}

describe("a tool's result that no layer reads", () => {
  it("reaches the client as the text its server wrote, escapes and spacing alike", async () => {
    const client = await initialized();
    try {
      const line = await client.request("tools/call", { name: "vb__verbatim", arguments: {} });
      expect(line).toBe(`{"jsonrpc":"2.0","id":2,"result":${VERBATIM_RESULT}}`);
    } finally {
      client.close();
    }
  });

  it("reaches a WebSocket client as the text its server wrote", async () => {
    const ws = new WebSocket(front.wsUrl, "mcp");
    const lines = new Map<number, (text: string) => void>();
    ws.on("message", (data: Buffer) => {
      const text = data.toString("utf8");
      lines.get((JSON.parse(text) as { id: number }).id)?.(text);
    });
    const request = (id: number, method: string, params: JsonObject) =>
      new Promise<string>((resolve) => {
        lines.set(id, resolve);
        ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      });
    try {
      await new Promise((resolve) => ws.once("open", resolve));
      await request(1, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw-result-test", version: "1" },
      });
      const line = await request(2, "tools/call", { name: "vb__verbatim", arguments: {} });
      expect(line).toBe(`{"jsonrpc":"2.0","id":2,"result":${VERBATIM_RESULT}}`);
    } finally {
      ws.close();
    }
  });

  it("reaches a 2026 HTTP client as the text its server wrote, the 2026 members after its own", async () => {
    const serverInfo = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcplex","version":"0.1.0"}}';
    expect(await post2026(7, "vb__verbatim")).toBe(
      `{"jsonrpc":"2.0","id":7,"result":${VERBATIM_RESULT.slice(0, -1)},"resultType":"complete",${serverInfo}}}`,
    );
    expect(await post2026(8, "empty__verbatim")).toBe(
      `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete",${serverInfo}}}`,
    );
  });

  it("is parsed for an interceptor the hub takes on after the start, which reads it", async () => {
    // It reads the content: it must be given the object, not the text, from its first call on.
    const stamp: Interceptor = (next) => async (request) => {
      const result = await next(request);
      if (request.method !== "tools/call") return result;
      const content = result.content as Array<{ type: string; text: string }>;
      return { ...result, content: [...content, { type: "text", text: `blocks: ${content.length}` }] };
    };
    const client = await initialized();
    const remove = hub.use(stamp);
    try {
      const line = await client.request("tools/call", { name: "vb__verbatim", arguments: {} });
      const { result } = JSON.parse(line) as { result: { content: Array<{ text: string }> } };
      expect(result.content.map((block) => block.text)).toEqual(['café "quoted" / ok', "blocks: 1"]);
    } finally {
      remove();
      client.close();
    }
  });
});

/** A 2026 `tools/call` of `name` POSTed to the front: the answer's body, as written. */
async function post2026(id: number, name: string): Promise<string> {
  const response = await fetch(front.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name,
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/json");
  return response.text();
}
