import { describe, expect, it } from "vitest";
import { Catalog, EXPOSED_NAME_PATTERN, nameHash } from "../../src/catalog/index.js";
import { prompt, rng, server, shuffled, tool } from "./fixtures.js";

function names(catalog: Catalog, profile?: string): string[] {
  return catalog.tools(profile).map((t) => t.name);
}

describe("Catalog tools", () => {
  it("exposes tools as server__name with the original tool untouched", () => {
    const original = tool("search.code", {
      description: "Search code",
      title: "Search",
      annotations: { readOnlyHint: true },
    });
    const catalog = Catalog.build([{ server: "github", state: "ready", tools: [original] }]);
    const [entry] = catalog.tools();
    expect(entry).toEqual({
      name: "github__search_code",
      originalName: "search.code",
      server: "github",
      title: "Search",
      description: "Search code",
      inputSchema: { type: "object" },
      annotations: { readOnlyHint: true },
      available: true,
      tool: original,
    });
    expect(entry!.tool).toBe(original);
    expect(Object.keys(entry!)).not.toContain("outputSchema");
  });

  it("uses a configured prefix instead of the server name", () => {
    const catalog = Catalog.build([server("github-enterprise", ["search"], { prefix: "gh" })]);
    expect(names(catalog)).toEqual(["gh__search"]);
  });

  it("passes names through, made safe, when the prefix is empty", () => {
    const catalog = Catalog.build([server("fs", ["read_file", "dir.list"], { prefix: "" })]);
    expect(names(catalog)).toEqual(["read_file", "dir_list"]);
  });

  it("maps every exposed name back to its server and original name", () => {
    const catalog = Catalog.build([
      server("a", ["x.y", "x_y", "plain", "n".repeat(100)]),
      server("b", ["plain", "ünï cödé"], { prefix: "" }),
      server("c", ["plain"], { prefix: "" }),
    ]);
    for (const entry of catalog.tools()) {
      expect(entry.name).toMatch(EXPOSED_NAME_PATTERN);
      const target = catalog.resolveTool(entry.name);
      expect(target).toMatchObject({ server: entry.server, originalName: entry.originalName });
    }
    expect(catalog.resolveTool("nope")).toBeUndefined();
    expect(catalog.resolveTool("a__x.y")).toBeUndefined();
  });

  it("handles a 100-character dotted tool name", () => {
    const dotted = Array.from({ length: 50 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(".") + ".";
    const catalog = Catalog.build([server("srv", [dotted])]);
    const [entry] = catalog.tools();
    expect(entry!.name).toMatch(EXPOSED_NAME_PATTERN);
    expect(entry!.name).toBe(
      `${`srv__${dotted.replaceAll(".", "_")}`.slice(0, 55)}_${nameHash("srv", dotted)}`,
    );
    expect(catalog.resolveTool(entry!.name)?.originalName).toBe(dotted);
  });

  it("is the same whatever order servers are added in", () => {
    const snapshots = [
      server("a", ["search", "x.y", "x_y"], { prefix: "" }),
      server("b", ["search", "other"], { prefix: "" }),
      server("c", ["search"]),
      server("d", ["z".repeat(80), `${"z".repeat(80)}!`]),
    ];
    const reference = Catalog.build(snapshots);
    const next = rng(3);
    for (let round = 0; round < 10; round++) {
      const catalog = Catalog.build(shuffled(snapshots, next));
      expect(catalog.tools()).toEqual(reference.tools());
      expect(catalog.collisions()).toEqual(reference.collisions());
    }
  });

  it("keeps names when an unrelated server is added or removed", () => {
    const catalog = Catalog.build([
      server("a", ["search", "x.y", "x_y", "q".repeat(90)]),
      server("b", ["ls"], { prefix: "" }),
    ]);
    const before = names(catalog);
    catalog.setServer(server("0first", ["search", "x.y"]));
    catalog.setServer(server("zlast", ["search", "ls2"], { prefix: "" }));
    expect(names(catalog).filter((n) => before.includes(n))).toEqual(before);
    catalog.removeServer("0first");
    catalog.removeServer("zlast");
    expect(names(catalog)).toEqual(before);
  });

  it("never hands a contested name to a newcomer in no-prefix mode", () => {
    const catalog = Catalog.build([server("b", ["search"], { prefix: "" })]);
    expect(catalog.resolveTool("search")?.server).toBe("b");
    // "a" sorts first: with a "first keeps the plain name" rule it would take over "search".
    catalog.setServer(server("a", ["search"], { prefix: "" }));
    expect(catalog.resolveTool("search")).toBeUndefined();
    expect(names(catalog)).toEqual([
      `search_${nameHash("a", "search")}`,
      `search_${nameHash("b", "search")}`,
    ]);
    expect(catalog.collisions()).toEqual([
      {
        kind: "tool",
        name: "search",
        members: [
          { server: "a", originalName: "search", exposedName: `search_${nameHash("a", "search")}` },
          { server: "b", originalName: "search", exposedName: `search_${nameHash("b", "search")}` },
        ],
      },
    ]);
    catalog.removeServer("a");
    expect(catalog.resolveTool("search")?.server).toBe("b");
    expect(catalog.collisions()).toEqual([]);
  });

  it("reports collisions inside one server and resolves both tools", () => {
    const catalog = Catalog.build([server("a", ["x.y", "x_y"])]);
    const [first, second] = catalog.tools();
    expect(first!.name).not.toBe(second!.name);
    expect(catalog.resolveTool(first!.name)?.originalName).toBe("x.y");
    expect(catalog.resolveTool(second!.name)?.originalName).toBe("x_y");
    expect(catalog.collisions().map((c) => [c.kind, c.name])).toEqual([["tool", "a__x_y"]]);
  });

  it("keeps the first of two tools listed under the same name", () => {
    const catalog = Catalog.build([
      {
        server: "a",
        state: "ready",
        tools: [tool("t", { description: "one" }), tool("t", { description: "two" })],
      },
    ]);
    expect(catalog.tools().map((t) => t.description)).toEqual(["one"]);
  });

  it("lists in server order, then in the order each server listed", () => {
    const snapshots = [server("zeta", ["b", "a"]), server("alpha", ["d", "c"]), server("mid", ["e"])];
    expect(names(Catalog.build(snapshots))).toEqual(["alpha__d", "alpha__c", "mid__e", "zeta__b", "zeta__a"]);
    const ordered = Catalog.build(snapshots, { serverOrder: ["zeta", "mid"] });
    expect(ordered.servers()).toEqual(["zeta", "mid", "alpha"]);
    expect(names(ordered)).toEqual(["zeta__b", "zeta__a", "mid__e", "alpha__d", "alpha__c"]);
  });

  it("builds 5000 tools, many colliding, and resolves them all", () => {
    const snapshots = Array.from({ length: 50 }, (_, s) =>
      server(
        `server${s}`,
        Array.from({ length: 100 }, (_, t) => (t % 2 ? `tool.${t}` : `tool_${t - (t % 2)}.x`)),
        {
          prefix: s % 2 ? "" : undefined,
        },
      ),
    );
    const catalog = Catalog.build(snapshots);
    const tools = catalog.tools();
    expect(tools).toHaveLength(5000);
    expect(new Set(tools.map((t) => t.name)).size).toBe(5000);
    for (const t of tools) expect(catalog.resolveTool(t.name)).toBe(t);
    expect(catalog.collisions().length).toBeGreaterThan(0);
  });

  it("increments the revision on every change", () => {
    const catalog = new Catalog();
    const start = catalog.revision;
    catalog.setServer(server("a", ["t"]));
    catalog.setServerState("a", "unavailable");
    catalog.removeServer("a");
    expect(catalog.revision).toBe(start + 3);
    expect(catalog.removeServer("a")).toBe(false);
    expect(catalog.revision).toBe(start + 3);
  });
});

describe("Catalog server filters", () => {
  const tools = ["read_file", "read_secret", "write_file", "git.log"];

  it("keeps only allowed tools, matching original names", () => {
    const catalog = Catalog.build([server("fs", tools, { filter: { allow: ["read_*", "git.*"] } })]);
    expect(names(catalog)).toEqual(["fs__read_file", "fs__read_secret", "fs__git_log"]);
  });

  it("drops denied tools, which then do not resolve", () => {
    const catalog = Catalog.build([server("fs", tools, { filter: { deny: ["write_*"] } })]);
    expect(names(catalog)).toEqual(["fs__read_file", "fs__read_secret", "fs__git_log"]);
    expect(catalog.resolveTool("fs__write_file")).toBeUndefined();
  });

  it("lets deny win over allow", () => {
    const catalog = Catalog.build([
      server("fs", tools, { filter: { allow: ["read_*"], deny: ["*secret*"] } }),
    ]);
    expect(names(catalog)).toEqual(["fs__read_file"]);
  });

  it("leaves filtered tools out of collision handling", () => {
    const catalog = Catalog.build([server("a", ["x.y", "x_y"], { filter: { deny: ["x.y"] } })]);
    expect(names(catalog)).toEqual(["a__x_y"]);
    expect(catalog.collisions()).toEqual([]);
  });
});

describe("Catalog prompts", () => {
  it("names prompts like tools and resolves them", () => {
    const catalog = Catalog.build([
      { ...server("a", []), prompts: [prompt("review.code"), prompt("review_code")] },
      { ...server("b", [], { prefix: "" }), prompts: [prompt("summarise")] },
    ]);
    const listed = catalog.prompts();
    expect(listed.map((p) => p.name)).toContain("summarise");
    for (const p of listed) {
      expect(p.name).toMatch(EXPOSED_NAME_PATTERN);
      expect(catalog.resolvePrompt(p.name)).toMatchObject({ server: p.server, originalName: p.originalName });
    }
    expect(catalog.collisions().map((c) => c.kind)).toEqual(["prompt"]);
  });
});

describe("Catalog unavailable servers", () => {
  it("keeps their tools listed as unavailable, with the same names, still resolvable", () => {
    const catalog = Catalog.build([server("a", ["t"]), server("b", ["t"], { state: "unavailable" })]);
    expect(catalog.tools().map((t) => [t.name, t.available])).toEqual([
      ["a__t", true],
      ["b__t", false],
    ]);
    expect(catalog.resolveTool("b__t")?.available).toBe(false);
    catalog.setServerState("b", "ready");
    expect(catalog.resolveTool("b__t")?.available).toBe(true);
    expect(catalog.setServerState("missing", "ready")).toBe(false);
  });

  it("hides them from listings with hideUnavailable, but still resolves them", () => {
    const catalog = Catalog.build(
      [
        server("a", ["t"]),
        {
          ...server("b", ["t"], { state: "unavailable" }),
          prompts: [prompt("p")],
          resources: [{ uri: "b://r", name: "r" }],
        },
      ],
      { hideUnavailable: true },
    );
    expect(names(catalog)).toEqual(["a__t"]);
    expect(catalog.prompts()).toEqual([]);
    expect(catalog.resources()).toEqual([]);
    expect(catalog.resolveTool("b__t")).toMatchObject({ server: "b", available: false });
    expect(catalog.resolveResource("b://r")).toMatchObject({ server: "b", available: false });
  });
});

describe("Catalog TTL", () => {
  it("reports servers whose listings outlived their ttlMs", () => {
    const catalog = Catalog.build([
      server("fresh", [], { listedAt: 1000, ttlMs: 5000 }),
      server("old", [], { listedAt: 1000, ttlMs: 100 }),
      server("forever", [], { listedAt: 1000 }),
      server("zero", [], { listedAt: 1000, ttlMs: 0 }),
    ]);
    expect(catalog.staleServers(1100)).toEqual(["old", "zero"]);
    expect(catalog.staleServers(6000)).toEqual(["fresh", "old", "zero"]);
    catalog.setServer(server("old", [], { listedAt: 6000, ttlMs: 100 }));
    expect(catalog.staleServers(6000)).toEqual(["fresh", "zero"]);
  });
});
