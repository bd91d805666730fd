/**
 * `serve: { serverTools: true }`: `mcplex serve --http` (the built CLI) offers connect_server and
 * disconnect_server over the config's `available:` servers (server-memory), and an SDK v2 client
 * in a 2025 session sees them, hears list_changed, and calls the tools they bring in.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configOf, stdio } from "../support/config.js";
import {
  COMMANDS,
  connectHttp,
  resultText,
  type ServeProcess,
  serveHttp,
  startGateway,
} from "../support/gateway.js";

const FULL = "full-access-token-8b1d2c3e4f";
const NARROW = "narrow-profile-token-9a8b7c6d";

let dir: string;
let gw: ServeProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-server-tools-"));
  const memory = (file: string) =>
    [
      `    command: ${JSON.stringify(COMMANDS.memory.command)}`,
      "    env:",
      `      MEMORY_FILE_PATH: ${JSON.stringify(join(dir, file))}`,
    ].join("\n");
  const config = [
    "serve:",
    "  readyWait: 1m",
    "  serverTools: true",
    "servers: {}",
    "available:",
    "  memory:",
    memory("memory.jsonl"),
    "  notes:",
    memory("notes.jsonl"),
    "profiles:",
    "  narrow:",
    "    servers: [notes]",
    "tokens:",
    `  - { token: ${FULL} }`,
    `  - { token: ${NARROW}, profile: narrow }`,
    "",
  ].join("\n");
  await writeFile(join(dir, "mcplex.yaml"), config);
  gw = await serveHttp(["--config", join(dir, "mcplex.yaml")], { env: { MCPLEX_HOME: dir } });
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

const connect = (token: string, mode: "legacy" | "auto" = "legacy") =>
  connectHttp(gw.url, { token, mode, name: "server-tools-test" });

/** Resolves at the next tools/list_changed the client hears. */
function nextListChanged(client: Client): Promise<void> {
  return new Promise((done) =>
    client.setNotificationHandler("notifications/tools/list_changed", () => done()),
  );
}

describe("connect_server and disconnect_server", () => {
  it("start and stop an available server, its tools following in the list with list_changed", async () => {
    const client = await connect(FULL);
    try {
      const before = (await client.listTools()).tools;
      const connectTool = before.find((t) => t.name === "connect_server");
      expect(connectTool?.description).toContain("- memory");
      expect(connectTool?.inputSchema.properties?.server).toMatchObject({ enum: ["memory", "notes"] });
      expect(before.find((t) => t.name === "disconnect_server")).toBeDefined();
      expect(before.some((t) => t.name.startsWith("memory__"))).toBe(false);

      let changed = nextListChanged(client);
      const connected = await client.callTool({ name: "connect_server", arguments: { server: "memory" } });
      expect(connected.isError).not.toBe(true);
      expect(resultText(connected)).toMatch(/^connected "memory": \d+ tools: .*memory__create_entities/);
      await changed;
      const after = (await client.listTools()).tools.map((t) => t.name);
      expect(after).toContain("memory__create_entities");
      const created = await client.callTool({
        name: "memory__create_entities",
        arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["programmer"] }] },
      });
      expect(created.isError).not.toBe(true);
      expect(resultText(created)).toContain("Ada");

      changed = nextListChanged(client);
      const disconnected = await client.callTool({
        name: "disconnect_server",
        arguments: { server: "memory" },
      });
      expect(resultText(disconnected)).toBe('disconnected "memory"; its tools are gone');
      await changed;
      const gone = (await client.listTools()).tools;
      expect(gone.some((t) => t.name.startsWith("memory__"))).toBe(false);
      // The stopped server's tools are shown from the list recorded on disk while it ran.
      expect(gone.find((t) => t.name === "connect_server")?.description).toMatch(
        /- memory: .*create_entities/,
      );
      // $MCPLEX_HOME/cache/tools/NAME.json: the one store of last-seen tool lists.
      const cache = await readFile(join(dir, "cache", "tools", "memory.json"), "utf8");
      expect(cache).toContain("read_graph");
    } finally {
      await client.close();
    }
  });

  it("reach a 2026 client too, whose subscriptions/listen hears the list change", async () => {
    const client = await connect(FULL, "auto");
    try {
      const changed = nextListChanged(client);
      const subscription = await client.listen({ toolsListChanged: true });
      const connected = await client.callTool({ name: "connect_server", arguments: { server: "notes" } });
      expect(resultText(connected)).toMatch(/^connected "notes": /);
      await changed;
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("notes__read_graph");
      await subscription.close();
      await client.callTool({ name: "disconnect_server", arguments: { server: "notes" } });
    } finally {
      await client.close();
    }
  });

  it("answer a name not available with a tool error naming the available ones", async () => {
    const client = await connect(FULL);
    try {
      const refused = await client.callTool({ name: "connect_server", arguments: { server: "rm-rf" } });
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toContain('server "rm-rf" is not available; available: memory, notes');
      const empty = await client.callTool({ name: "disconnect_server", arguments: {} });
      expect(empty.isError).toBe(true);
      expect(resultText(empty)).toBe('give "server", one of: memory, notes');
    } finally {
      await client.close();
    }
  });

  it("let a profile-bound token connect only the servers its profile could see", async () => {
    const client = await connect(NARROW);
    try {
      const tools = (await client.listTools()).tools;
      const connectTool = tools.find((t) => t.name === "connect_server");
      expect(connectTool?.inputSchema.properties?.server).toMatchObject({ enum: ["notes"] });
      const refused = await client.callTool({ name: "connect_server", arguments: { server: "memory" } });
      expect(refused.isError).toBe(true);
      expect(resultText(refused)).toContain(
        'server "memory" is not available to profile "narrow"; available: notes',
      );
      const allowed = await client.callTool({ name: "connect_server", arguments: { server: "notes" } });
      expect(resultText(allowed)).toMatch(/^connected "notes": \d+ tools: notes__/);
      await client.callTool({ name: "disconnect_server", arguments: { server: "notes" } });
    } finally {
      await client.close();
    }
  });
});

describe("without serve.serverTools", () => {
  it("offers no connect_server, and available servers stay stopped", async () => {
    const memory = stdio("memory", COMMANDS.memory.command, [], {
      env: { MEMORY_FILE_PATH: join(dir, "off.jsonl") },
    } as never);
    const served = await startGateway(configOf([], { available: [memory] }));
    const client = new Client({ name: "off", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual([]);
      const call = await client
        .callTool({ name: "connect_server", arguments: { server: "memory" } })
        .catch((error: unknown) => error);
      expect(String(call)).toContain("Unknown tool: connect_server");
      expect(served.hub.servers()).toEqual([]);
    } finally {
      await client.close();
      await served.stop();
    }
  });
});

describe("connect_server beside search mode", () => {
  it("lets search_tools find the tools of a server that does not run, from its recorded list", async () => {
    const home = await mkdtemp(join(tmpdir(), "mcplex-available-"));
    const config = [
      "serve:",
      "  mode: search",
      "  serverTools: true",
      "servers: {}",
      "available:",
      "  memory:",
      `    command: ${JSON.stringify(COMMANDS.memory.command)}`,
      "    env:",
      `      MEMORY_FILE_PATH: ${JSON.stringify(join(home, "memory.jsonl"))}`,
      "",
    ].join("\n");
    await writeFile(join(home, "mcplex.yaml"), config);
    const served = await serveHttp(["--config", join(home, "mcplex.yaml")], { env: { MCPLEX_HOME: home } });
    const client = new Client(
      { name: "available-test", version: "1.0.0" },
      { versionNegotiation: { mode: "legacy" } },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual([
        "search_tools",
        "describe_tools",
        "call_tool",
        "connect_server",
        "disconnect_server",
      ]);
      const query = { query: "create entities in the knowledge graph" };
      // Never run yet: nothing recorded, nothing to find.
      expect(resultText(await client.callTool({ name: "search_tools", arguments: query }))).not.toContain(
        "memory__create_entities",
      );
      // Once it has run, its list is on disk and found while it is stopped.
      await client.callTool({ name: "connect_server", arguments: { server: "memory" } });
      await client.callTool({ name: "disconnect_server", arguments: { server: "memory" } });
      const found = resultText(await client.callTool({ name: "search_tools", arguments: query }));
      expect(found).toMatch(/not running[^\n]*\n(- [^\n]*\n)*- memory__create_entities \(memory\)/);
    } finally {
      await client.close();
      await served.stop();
      await rm(home, { recursive: true, force: true });
    }
  });
});
