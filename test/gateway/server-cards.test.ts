import { request } from "node:http";
import { resolve } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { MAX_CARD_BYTES } from "../../src/fronts/server-cards.js";
import { SKILLS_EXTENSION } from "../../src/protocol/extensions.js";
import { configOf, fixture, stdio } from "../support/config.js";
import { errorOf } from "../support/config-errors.js";
import { type InProcessGateway, startGateway } from "../support/gateway.js";
import { validateAiCatalog, validateServerCard } from "../support/server-card-schema.js";

/**
 * The Server Card and AI Catalog of a real gateway on loopback (the MCP draft SEP-2127):
 * fetched over HTTP, checked against the draft's rules, used by the official SDK to connect.
 */

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with any headers (a Host the SDK's fetch would not let us forge). */
function get(url: string, headers: Record<string, string> = {}, method = "GET"): Promise<Fetched> {
  return new Promise((done, fail) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on("error", fail);
    req.end();
  });
}

const SKILLS = stdio("skills", process.execPath, [resolve("test/fixtures/servers/skills-server.mjs")]);

let gw: InProcessGateway;
beforeAll(async () => {
  gw = await startGateway(
    configOf([fixture("fx"), SKILLS], { profiles: { plain: { servers: ["fx"], tools: {} } } }),
  );
});
afterAll(async () => {
  await gw?.stop();
});

describe("the gateway's Server Card", () => {
  it("is served at /mcp/server-card, valid by the draft, naming the bound address", async () => {
    const res = await get(`${gw.origin}/mcp/server-card`);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/mcp-server-card+json");
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["cache-control"]).toMatch(/^public, max-age=\d+$/);
    expect(Buffer.byteLength(res.body)).toBeLessThan(MAX_CARD_BYTES);
    const card = JSON.parse(res.body);
    expect(validateServerCard(card), JSON.stringify(validateServerCard.errors)).toBe(true);
    expect(card.name).toBe("127.0.0.1/mcplex");
    // The rules have teeth: the gateway's bare name, or a WebSocket remote, is not a valid card.
    expect(validateServerCard({ ...card, name: "mcplex" })).toBe(false);
    expect(validateServerCard({ ...card, remotes: [{ type: "websocket", url: gw.wsUrl }] })).toBe(false);
    expect(card.remotes).toEqual([
      expect.objectContaining({ type: "streamable-http", url: gw.url }),
      expect.objectContaining({ type: "sse", url: `${gw.origin}/sse` }),
    ]);
    expect(card.remotes[0].supportedProtocolVersions).toContain("2025-11-25");
    expect(card.remotes[0].headers).toBeUndefined();
    // Loopback without tokens: an anonymous caller reaches every server, skills among them.
    expect(card._meta["mcplex/gateway"]).toEqual({
      websocket: gw.wsUrl,
      extensions: expect.arrayContaining([SKILLS_EXTENSION]),
    });
    // No tools, resources or prompts: the draft leaves them to the protocol's lists.
    expect(res.body).not.toMatch(/echo|inputSchema/);
  });

  it("answers If-None-Match with 304, OPTIONS with CORS, other methods with 405", async () => {
    const first = await get(`${gw.origin}/mcp/server-card`);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^".+"$/);
    const again = await get(`${gw.origin}/mcp/server-card`, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body).toBe("");
    const options = await get(`${gw.origin}/mcp/server-card`, {}, "OPTIONS");
    expect(options.status).toBe(204);
    expect(options.headers["access-control-allow-headers"]).toMatch(/If-None-Match/);
    expect(options.headers["access-control-expose-headers"]).toBe("ETag");
    expect((await get(`${gw.origin}/mcp/server-card`, {}, "DELETE")).status).toBe(405);
  });

  it("is listed by the AI Catalog at /.well-known/ai-catalog.json", async () => {
    const res = await get(`${gw.origin}/.well-known/ai-catalog.json`);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/ai-catalog+json");
    const catalog = JSON.parse(res.body);
    expect(validateAiCatalog(catalog), JSON.stringify(validateAiCatalog.errors)).toBe(true);
    expect(catalog.entries).toEqual([
      {
        identifier: "urn:air:127.0.0.1:mcp:mcplex",
        type: "application/mcp-server-card+json",
        url: `${gw.origin}/mcp/server-card`,
      },
    ]);
  });

  it("is all an SDK client needs to connect", async () => {
    const catalog = JSON.parse((await get(`${gw.origin}/.well-known/ai-catalog.json`)).body);
    const card = JSON.parse((await get(catalog.entries[0].url)).body);
    const remote = card.remotes.find((r: { type: string }) => r.type === "streamable-http");
    const client = new Client({ name: "card-reader", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(remote.url)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("fx__echo");
    } finally {
      await client.close();
    }
  });

  it("of a front bound to a profile shows that profile's reach", async () => {
    const front = await gw.addFront({ profile: "plain" });
    const origin = front.url.replace(/\/mcp$/, "");
    const card = JSON.parse((await get(`${origin}/mcp/server-card`)).body);
    expect(validateServerCard(card)).toBe(true);
    // The profile reaches fx alone, which serves no extension: the card declares none.
    expect(card._meta["mcplex/gateway"]).toEqual({ websocket: front.wsUrl });
    const open = JSON.parse((await get(`${gw.origin}/mcp/server-card`)).body);
    expect(open._meta["mcplex/gateway"].extensions).toContain(SKILLS_EXTENSION);
  });

  it("changes when the catalog does, and not otherwise", async () => {
    const before = await get(`${gw.origin}/mcp/server-card`);
    expect((await get(`${gw.origin}/mcp/server-card`)).headers.etag).toBe(before.headers.etag);
    await gw.hub.removeServer("skills");
    const after = await get(`${gw.origin}/mcp/server-card`);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(JSON.parse(after.body)._meta["mcplex/gateway"].extensions).toBeUndefined();
  });

  it("is not served when turned off (serve.cards: false)", async () => {
    const front = await gw.addFront({ cards: false });
    const origin = front.url.replace(/\/mcp$/, "");
    expect((await get(`${origin}/mcp/server-card`)).status).toBe(404);
    expect((await get(`${origin}/.well-known/ai-catalog.json`)).status).toBe(404);
  });
});

describe("serve.cards", () => {
  it("is read as a boolean, and refused as anything else at its path", () => {
    const config = parseConfig("servers: {}\nserve:\n  cards: false\n", { source: "mcplex.yaml", env: {} });
    expect(config.serve?.cards).toBe(false);
    expect(errorOf("servers: {}\nserve:\n  cards: off-please\n").path).toBe("serve.cards");
  });
});
