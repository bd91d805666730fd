/**
 * `available:` servers: approved in the config, not started with the hub, started and stopped
 * by name (server-memory over stdio), with their tool lists kept on disk for when they are stopped.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McplexConfig, ServerConfig } from "../../src/config/types.js";
import { McplexError } from "../../src/errors.js";
import { Hub, type HubEvent } from "../../src/hub/hub.js";
import { applyConfig } from "../../src/servers/config-reloader.js";
import { definitionHash } from "../../src/servers/tool-lists.js";
import { configOf, fixture, MEMORY, stdio } from "../support/config.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-available-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const SECRET = "memory-secret-value-5c1f";

function memory(dir: string): ServerConfig {
  return stdio("memory", MEMORY, [], {
    env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl"), UNUSED_TOKEN: SECRET },
  } as never);
}

function hubOf(config: McplexConfig, toolCache: string): { hub: Hub; events: HubEvent[] } {
  const hub = new Hub({ config, toolCache });
  cleanups.push(() => hub.close());
  const events: HubEvent[] = [];
  hub.on((event) => events.push(event));
  return { hub, events };
}

describe("available servers", () => {
  it("are not started with the hub, and connect and disconnect by name", async () => {
    const dir = tempDir();
    const cache = join(dir, "cache");
    const config = configOf([fixture("always")], { available: [memory(dir)], secrets: [SECRET] });
    const { hub, events } = hubOf(config, cache);
    await hub.start();
    expect(hub.servers().map((s) => s.name)).toEqual(["always"]);
    expect(await hub.availableServers()).toEqual(["memory"]);
    expect(await hub.availableTools()).toEqual([{ server: "memory", connected: false, tools: [] }]);

    events.length = 0;
    const status = await hub.connectServer("memory");
    expect(status).toMatchObject({ name: "memory", state: "ready", starts: 1 });
    expect(events).toContainEqual(expect.objectContaining({ type: "catalog-changed", servers: ["memory"] }));
    expect(hub.tools().map((t) => t.name)).toContain("memory__create_entities");
    const created = await hub.callTool("memory__create_entities", {
      entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
    });
    expect(created.isError).not.toBe(true);
    const [live] = await hub.availableTools();
    expect(live?.connected).toBe(true);
    expect(live?.tools.find((t) => t.name === "read_graph")?.description).toBeTruthy();
    // Connecting a connected server changes nothing.
    expect((await hub.connectServer("memory")).pid).toBe(status.pid);

    events.length = 0;
    expect(await hub.disconnectServer("memory")).toBe(true);
    expect(hub.servers().map((s) => s.name)).toEqual(["always"]);
    expect(hub.tools().some((t) => t.server === "memory")).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ type: "catalog-changed", servers: ["memory"] }));
    expect(() => process.kill(status.pid!, 0)).toThrow();
    expect(await hub.disconnectServer("memory")).toBe(false);

    // Stopped, it still shows the tools it had, with their schemas.
    const [recorded] = await hub.availableTools();
    expect(recorded?.connected).toBe(false);
    expect(recorded?.recordedAt).toBeTypeOf("number");
    const create = recorded?.tools.find((t) => t.name === "create_entities");
    expect(create?.inputSchema).toMatchObject({ type: "object" });
    const file = readFileSync(join(cache, "tools", "memory.json"), "utf8");
    expect(file).toContain("create_entities");
    expect(file).not.toContain(SECRET);
    expect(file).not.toContain(dir);
  });

  it("show the tools recorded by an earlier hub before they are connected, until their definition changes", async () => {
    const dir = tempDir();
    const cache = join(dir, "cache");
    const first = hubOf(configOf([], { available: [memory(dir)] }), cache).hub;
    await first.connectServer("memory");
    await first.close();

    const later = hubOf(configOf([], { available: [memory(dir)] }), cache).hub;
    const [shown] = await later.availableTools();
    expect(shown?.connected).toBe(false);
    expect(shown?.tools.map((t) => t.name)).toContain("read_graph");

    const changed = memory(dir) as ServerConfig & { args: string[] };
    changed.args = ["--other"];
    const other = hubOf(configOf([], { available: [changed] }), cache).hub;
    expect(await other.availableTools()).toEqual([{ server: "memory", connected: false, tools: [] }]);
  });

  it("keep their recorded tools with the config's secrets redacted, on disk and as shown", async () => {
    const dir = tempDir();
    const cache = join(dir, "cache");
    // A secret the server's own descriptions quote ("... in the knowledge graph").
    const { hub } = hubOf(configOf([], { available: [memory(dir)], secrets: ["knowledge graph"] }), cache);
    await hub.connectServer("memory");
    await hub.disconnectServer("memory");
    const file = readFileSync(join(cache, "tools", "memory.json"), "utf8");
    expect(file).toContain("create_entities");
    expect(file).not.toContain("knowledge graph");
    const [shown] = await hub.availableTools();
    const create = shown?.tools.find((t) => t.name === "create_entities");
    expect(create?.description).toContain("***");
    expect(create?.description).not.toContain("knowledge graph");
  });

  it("still show the tools kept in the tool-cache.json of earlier versions, beside the secret store", async () => {
    const dir = tempDir();
    vi.stubEnv("MCPLEX_HOME", join(dir, "home"));
    vi.stubEnv("MCPLEX_CACHE_DIR", join(dir, "cache"));
    cleanups.push(() => vi.unstubAllEnvs());
    const server = memory(dir);
    mkdirSync(join(dir, "home"));
    const tool = { name: "read_graph", description: `read it, ${SECRET}`, inputSchema: { type: "object" } };
    writeFileSync(
      join(dir, "home", "tool-cache.json"),
      JSON.stringify({
        version: 1,
        servers: {
          memory: { definition: definitionHash(server), recordedAt: 1_700_000_000_000, tools: [tool] },
        },
      }),
    );
    const hub = new Hub({ config: configOf([], { available: [server], secrets: [SECRET] }) });
    cleanups.push(() => hub.close());
    expect(await hub.availableTools()).toEqual([
      {
        server: "memory",
        connected: false,
        recordedAt: 1_700_000_000_000,
        tools: [{ ...tool, description: "read it, ***" }],
      },
    ]);
  });

  it("refuse a name not under available, listing the names that are", async () => {
    const dir = tempDir();
    const config = configOf([fixture("always")], { available: [memory(dir)] });
    const { hub } = hubOf(config, join(dir, "cache"));
    for (const name of ["nope", "always"]) {
      const refused = await hub.connectServer(name).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(McplexError);
      expect((refused as McplexError).message).toBe(`server "${name}" is not available; available: memory`);
      expect((refused as McplexError).hint).toContain('"available:"');
    }
    await expect(hub.disconnectServer("always")).rejects.toThrow(/not available; available: memory/);
    expect(hub.servers().map((s) => s.name)).toEqual(["always"]);
  });

  it("may be connected through a profile only when the profile could see them", async () => {
    const dir = tempDir();
    const config = configOf([], {
      available: [
        memory(dir),
        stdio("other", MEMORY, [], { env: { MEMORY_FILE_PATH: join(dir, "o.jsonl") } } as never),
      ],
      profiles: { narrow: { servers: ["other"], tools: {} }, wide: { tools: {} } },
    });
    const { hub } = hubOf(config, join(dir, "cache"));
    expect(await hub.availableServers("narrow")).toEqual(["other"]);
    const refused = await hub.connectServer("memory", { profile: "narrow" }).catch((e: unknown) => e);
    expect((refused as McplexError).message).toBe(
      'server "memory" is not available to profile "narrow"; available: other',
    );
    expect((refused as McplexError).hint).toBe(
      'add "memory" to profiles.narrow.servers to let this profile connect it',
    );
    expect(hub.servers()).toEqual([]);
    await expect(hub.connectServer("memory", { profile: "wide" })).resolves.toMatchObject({ state: "ready" });
  });

  it("leave nothing behind when their start fails", async () => {
    const dir = tempDir();
    const broken = stdio("broken", join(dir, "no-such-command"));
    const { hub } = hubOf(configOf([], { available: [broken] }), join(dir, "cache"));
    const failed = await hub.connectServer("broken").catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(McplexError);
    expect((failed as McplexError).code).toBe("UPSTREAM_START_FAILED");
    expect(hub.servers()).toEqual([]);
    expect(await hub.disconnectServer("broken")).toBe(false);
  });
});

describe("a reloaded config", () => {
  it("stops a connected available server it no longer lists, and refuses its name from then on", async () => {
    const dir = tempDir();
    const before = configOf([], { available: [memory(dir)] });
    const { hub } = hubOf(before, join(dir, "cache"));
    const { pid } = await hub.connectServer("memory");
    const outcome = await applyConfig(hub, before, configOf([], { available: [] }));
    expect(outcome.ok).toBe(true);
    expect(hub.servers()).toEqual([]);
    expect(() => process.kill(pid!, 0)).toThrow();
    await expect(hub.connectServer("memory")).rejects.toThrow(
      'server "memory" is not available; available: none',
    );
  });
});
