import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { McplexConfig } from "../../src/config/types.js";
import { CACHE_META } from "../../src/interceptors/result-cache.js";
import { configOf, EVERYTHING, fixture, MEMORY, stdio } from "../support/config.js";
import { type InProcessGateway, resultText, startGateway } from "../support/gateway.js";

// Results of read-only tools are reused for `cache.ttl`, per caller, and never for tools that
// may change something. The proof that a hit did not reach the server is the fixture's log of
// the calls it ran, not the marker the gateway adds.

let gw: InProcessGateway | undefined;
let dir: string;
const clients: Client[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-cache-"));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await gw?.stop();
  gw = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function client(token?: string): Promise<Client> {
  const c = new Client({ name: "cache-test", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
  await c.connect(
    new StreamableHTTPClientTransport(
      new URL(gw!.url),
      token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
    ),
  );
  clients.push(c);
  return c;
}

const ran = (tag: string) =>
  readFileSync(join(dir, "fx.log"), "utf8")
    .split("\n")
    .filter((line) => line === `ran ${tag}`).length;

const cached = (result: unknown) => (result as { _meta?: Record<string, unknown> })._meta?.[CACHE_META];

function fixtureConfig(cache: McplexConfig["servers"][number]["cache"], extra: Partial<McplexConfig> = {}) {
  return configOf([fixture("fx", [], { env: { FIXTURE_LOG: join(dir, "fx.log") }, cache } as never)], extra);
}

describe("result cache", () => {
  it("answers a repeated call of a vouched-for tool without calling the server again", async () => {
    gw = await startGateway(fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true } } }));
    const c = await client();
    const first = await c.callTool({ name: "fx__mark", arguments: { tag: "a" } });
    const second = await c.callTool({ name: "fx__mark", arguments: { tag: "a" } });
    expect(resultText(second)).toBe("marked a");
    expect(cached(first)).toBeUndefined();
    expect(cached(second)).toMatchObject({ hit: true });
    expect(ran("a")).toBe(1);
    // Other arguments are another result.
    await c.callTool({ name: "fx__mark", arguments: { tag: "b" } });
    expect(ran("b")).toBe(1);
    expect(gw.gateway.cache.counts().get("fx")).toMatchObject({ hits: 1, misses: 2, entries: 2 });
  });

  it("reads arguments in canonical form: key order does not make another entry", async () => {
    gw = await startGateway(fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true } } }));
    const c = await client();
    await c.callTool({ name: "fx__mark", arguments: { tag: "k", extra: { y: 1, x: 2 } } });
    const again = await c.callTool({ name: "fx__mark", arguments: { extra: { x: 2, y: 1 }, tag: "k" } });
    expect(cached(again)).toMatchObject({ hit: true });
    expect(ran("k")).toBe(1);
  });

  it("never caches a tool the server does not mark read-only, unless the config vouches for it", async () => {
    gw = await startGateway(fixtureConfig({ ttl: 60_000 }));
    const c = await client();
    await c.callTool({ name: "fx__mark", arguments: { tag: "u" } });
    await c.callTool({ name: "fx__mark", arguments: { tag: "u" } });
    expect(ran("u")).toBe(2);
    expect(gw.gateway.cache.counts().get("fx")).toBeUndefined();
  });

  it("keeps results apart per caller: two tokens never share an entry", async () => {
    const tokens = [{ token: "first-caller-token-0001" }, { token: "second-caller-token-002" }];
    gw = await startGateway(fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true } } }, { tokens }));
    const one = await client(tokens[0]!.token);
    const two = await client(tokens[1]!.token);
    await one.callTool({ name: "fx__mark", arguments: { tag: "p" } });
    const other = await two.callTool({ name: "fx__mark", arguments: { tag: "p" } });
    expect(cached(other)).toBeUndefined();
    expect(ran("p")).toBe(2);
    expect(cached(await one.callTool({ name: "fx__mark", arguments: { tag: "p" } }))).toMatchObject({
      hit: true,
    });
    expect(ran("p")).toBe(2);
  });

  it("expires entries after their ttl, and a per-tool ttl overrides the server's", async () => {
    let now = 1_000_000;
    gw = await startGateway(
      fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true, ttl: 1000 } } }),
      {},
      { cache: { now: () => now } },
    );
    const c = await client();
    await c.callTool({ name: "fx__mark", arguments: { tag: "t" } });
    now += 999;
    expect(cached(await c.callTool({ name: "fx__mark", arguments: { tag: "t" } }))).toMatchObject({
      hit: true,
      ageMs: 999,
    });
    now += 2;
    expect(cached(await c.callTool({ name: "fx__mark", arguments: { tag: "t" } }))).toBeUndefined();
    expect(ran("t")).toBe(2);
  });

  it("does not keep tool errors", async () => {
    gw = await startGateway(fixtureConfig({ ttl: 60_000, tools: { fail: { readOnly: true } } }));
    const c = await client();
    await c.callTool({ name: "fx__fail", arguments: {} });
    const again = await c.callTool({ name: "fx__fail", arguments: {} });
    expect(again.isError).toBe(true);
    expect(cached(again)).toBeUndefined();
    expect(gw.gateway.cache.counts().get("fx")).toMatchObject({ misses: 2, entries: 0 });
  });

  it("drops a server's entries when its tool list changes", async () => {
    gw = await startGateway(fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true } } }));
    const c = await client();
    await c.callTool({ name: "fx__mark", arguments: { tag: "l" } });
    expect(gw.gateway.cache.counts().get("fx")?.entries).toBe(1);
    const changed = new Promise<void>((resolve) => {
      const off = gw!.hub.on((event) => {
        if (event.type === "catalog-changed" && event.servers.includes("fx")) {
          off();
          resolve();
        }
      });
    });
    await c.callTool({ name: "fx__add_tool", arguments: {} });
    await changed;
    expect(gw.gateway.cache.counts().get("fx")?.entries).toBe(0);
    await c.callTool({ name: "fx__mark", arguments: { tag: "l" } });
    expect(ran("l")).toBe(2);
  });

  it("caches the calls of a server given cache: while serving, from its first call", async () => {
    // Until then no server caches, and the cache is not on the calls' path at all.
    gw = await startGateway(configOf([]));
    await gw.hub.addServer(
      fixture("fx", [], {
        env: { FIXTURE_LOG: join(dir, "fx.log") },
        cache: { ttl: 60_000, tools: { mark: { readOnly: true } } },
      } as never),
    );
    const c = await client();
    await c.callTool({ name: "fx__mark", arguments: { tag: "r" } });
    expect(cached(await c.callTool({ name: "fx__mark", arguments: { tag: "r" } }))).toMatchObject({
      hit: true,
    });
    expect(ran("r")).toBe(1);
  });

  it("evicts the least recently used entry past maxEntries", async () => {
    gw = await startGateway(
      fixtureConfig({ ttl: 60_000, tools: { mark: { readOnly: true } } }),
      {},
      {
        cache: { maxEntries: 2 },
      },
    );
    const c = await client();
    for (const tag of ["e1", "e2"]) await c.callTool({ name: "fx__mark", arguments: { tag } });
    await c.callTool({ name: "fx__mark", arguments: { tag: "e1" } }); // e1 is now the most recent
    await c.callTool({ name: "fx__mark", arguments: { tag: "e3" } }); // e2 goes
    await c.callTool({ name: "fx__mark", arguments: { tag: "e1" } });
    await c.callTool({ name: "fx__mark", arguments: { tag: "e2" } });
    expect([ran("e1"), ran("e2"), ran("e3")]).toEqual([1, 2, 1]);
  });

  it("caches a real server's read-only tool and never its destructive one, even when vouched for", async () => {
    gw = await startGateway(
      configOf([
        stdio("everything", EVERYTHING, ["stdio"], { cache: { ttl: 60_000 } } as never),
        stdio("memory", MEMORY, [], {
          env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
          cache: { ttl: 60_000, tools: { "*": { readOnly: true } } },
        } as never),
      ]),
    );
    const c = await client();
    await c.callTool({ name: "everything__echo", arguments: { message: "hi" } });
    const hit = await c.callTool({ name: "everything__echo", arguments: { message: "hi" } });
    expect(resultText(hit)).toContain("hi");
    expect(cached(hit)).toMatchObject({ hit: true });
    const entities = { entities: [{ name: "n1", entityType: "t", observations: [] }] };
    await c.callTool({ name: "memory__create_entities", arguments: entities });
    const graph = await c.callTool({ name: "memory__read_graph", arguments: {} });
    expect(resultText(graph)).toContain("n1");
    const remove = { entityNames: ["n1"] };
    await c.callTool({ name: "memory__delete_entities", arguments: remove });
    const removedAgain = await c.callTool({ name: "memory__delete_entities", arguments: remove });
    expect(cached(removedAgain)).toBeUndefined();
    const state = (await (await fetch(gw.url.replace(/\/mcp$/, "/dashboard/state"))).json()) as {
      cache: Record<string, { hits: number; misses: number }>;
    };
    expect(state.cache.everything).toMatchObject({ hits: 1, misses: 1 });
    const metrics = await (await fetch(gw.url.replace(/\/mcp$/, "/metrics"))).text();
    expect(metrics).toMatch(/mcplex_cache_lookups_total\{server="everything",outcome="hit"\} 1/);
    expect(metrics).toMatch(/mcplex_cache_lookups_total\{server="everything",outcome="miss"\} 1/);
  });
});
