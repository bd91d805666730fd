import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SKILLS_EXTENSION } from "../../src/protocol/extensions.js";
import { COMMANDS, type ServeProcess, serveHttp, yamlConfig } from "../support/gateway.js";
import { validateServerCard } from "../support/server-card-schema.js";

/** `mcplex serve` (the built CLI) publishing its Server Card, and the card following a reload. */

const SKILLS = { command: process.execPath, args: [resolve("test/fixtures/servers/skills-server.mjs")] };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cards-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function card(gw: ServeProcess): Promise<Record<string, unknown> & { _meta?: Record<string, any> }> {
  const res = await fetch(`${gw.origin}/mcp/server-card`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("mcplex serve's Server Card", () => {
  it("follows a reload of the config: a server added declares its extension on the card", async () => {
    const config = join(dir, "reload.yaml");
    await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
    const gw = await serveHttp(["--config", config]);
    const client = new Client(
      { name: "cards-reload", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    try {
      const before = await card(gw);
      expect(validateServerCard(before)).toBe(true);
      expect(before._meta?.["mcplex/gateway"]?.extensions).toBeUndefined();
      await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
      // The skills server lists no tools to a client without MCP Apps; its resources tell.
      const listed = (await client.listResources()).resources.length;
      const added = new Promise<void>((done) =>
        client.setNotificationHandler("notifications/resources/list_changed", async () => {
          if ((await client.listResources()).resources.length > listed) done();
        }),
      );
      await writeFile(config, yamlConfig({ fx: COMMANDS.fixture, skills: SKILLS }));
      await added;
      const after = await card(gw);
      expect(validateServerCard(after)).toBe(true);
      expect(after._meta?.["mcplex/gateway"]?.extensions).toContain(SKILLS_EXTENSION);
    } finally {
      await client.close();
      await gw.stop();
    }
  });

  it("is not served with serve.cards: false", async () => {
    const config = join(dir, "off.yaml");
    await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }, "serve:\n  cards: false\n"));
    const gw = await serveHttp(["--config", config]);
    try {
      expect((await fetch(`${gw.origin}/mcp/server-card`)).status).toBe(404);
      expect((await fetch(`${gw.origin}/.well-known/ai-catalog.json`)).status).toBe(404);
    } finally {
      await gw.stop();
    }
  });
});
