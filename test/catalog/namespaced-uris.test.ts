import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/catalog.js";
import { namespaceResult, namespaceUri, parseNamespacedUri } from "../../src/catalog/namespaced-uris.js";
import type { ServerSnapshot } from "../../src/catalog/types.js";

const APP = {
  _meta: { ui: { resourceUri: "ui://report/view.html" }, "ui/resourceUri": "ui://report/view.html" },
};
const APP_ONLY = { _meta: { ui: { resourceUri: "ui://report/view.html", visibility: ["app"] } } };

function server(name: string, extra: Partial<ServerSnapshot> = {}): ServerSnapshot {
  return {
    server: name,
    state: "ready",
    tools: [
      { name: "show", inputSchema: { type: "object" }, ...APP },
      { name: "refresh", inputSchema: { type: "object" }, ...APP_ONLY },
    ],
    resources: [
      { uri: "ui://report/view.html", name: "report" },
      { uri: "skill://refunds/SKILL.md", name: "refunds" },
      { uri: "file:///shared.txt", name: "shared" },
    ],
    resourceTemplates: [{ uriTemplate: "skill://{name}/SKILL.md", name: "skills" }],
    extensions: { "io.modelcontextprotocol/skills": {}, "io.modelcontextprotocol/ui": {} },
    ...extra,
  };
}

describe("skill and app URIs per server", () => {
  it("puts the server's name first and takes it off again, keeping scheme and last segments", () => {
    expect(namespaceUri("alpha", "skill://acme/billing/refunds/SKILL.md")).toBe(
      "skill://alpha/acme/billing/refunds/SKILL.md",
    );
    expect(namespaceUri("a b", "ui://x")).toBe("ui://a%20b/x");
    expect(namespaceUri("alpha", "file:///x")).toBe("file:///x");
    expect(namespaceUri(undefined, "ui://x")).toBe("ui://x");
    expect(parseNamespacedUri("ui://a%20b/x")).toEqual({ scheme: "ui", namespace: "a b", uri: "ui://x" });
    expect(parseNamespacedUri("ui://alpha")).toBeUndefined();
    expect(parseNamespacedUri("ui://alpha/")).toBeUndefined();
  });

  it("lists each server's skill and app resources, templates and tool apps under its name", () => {
    const catalog = Catalog.build([server("alpha"), server("beta")]);
    expect(catalog.resources().map((r) => r.uri)).toEqual([
      "ui://alpha/report/view.html",
      "skill://alpha/refunds/SKILL.md",
      "mcplex://alpha/file%3A%2F%2F%2Fshared.txt",
      "ui://beta/report/view.html",
      "skill://beta/refunds/SKILL.md",
      "mcplex://beta/file%3A%2F%2F%2Fshared.txt",
    ]);
    expect(catalog.resourceTemplates().map((t) => t.uriTemplate)).toEqual([
      "skill://alpha/{name}/SKILL.md",
      "skill://beta/{name}/SKILL.md",
    ]);
    expect(catalog.collisions().map((c) => c.name)).toEqual(["file:///shared.txt"]);
    const [show] = catalog.tools();
    expect(show?.meta).toEqual({
      ui: { resourceUri: "ui://alpha/report/view.html" },
      "ui/resourceUri": "ui://alpha/report/view.html",
    });
    expect(show?.tool._meta).toEqual(APP._meta);
  });

  it("routes a URI naming a server to that server, listed or not, and never a raw one to a namespaced server", () => {
    const catalog = Catalog.build([server("alpha"), server("beta")]);
    expect(catalog.resolveResource("skill://beta/acme/other/SKILL.md")).toEqual({
      server: "beta",
      uri: "skill://acme/other/SKILL.md",
      available: true,
      via: "namespaced",
      namespace: "beta",
    });
    expect(catalog.resolveResource("skill://refunds/SKILL.md")).toBeUndefined();
    expect(catalog.resolveResource("skill://gamma/refunds/SKILL.md")).toBeUndefined();
  });

  it("leaves a pass-through server's URIs as they are and sends it the skill URIs no server claims", () => {
    const catalog = Catalog.build([server("alpha"), server("pass", { prefix: "" })]);
    expect(catalog.resources().map((r) => r.uri)).toContain("skill://refunds/SKILL.md");
    expect(catalog.resolveResource("skill://refunds/SKILL.md")?.server).toBe("pass");
    expect(catalog.resolveResource("skill://unlisted/SKILL.md")).toMatchObject({
      server: "pass",
      uri: "skill://unlisted/SKILL.md",
    });
    expect(catalog.resolveResource("skill://alpha/unlisted/SKILL.md")?.server).toBe("alpha");
  });

  it("keeps what a profile cannot reach unknown, in every form", () => {
    const catalog = Catalog.build([server("alpha"), server("beta")], {
      profiles: { a: { servers: ["alpha"], tools: {}, resources: {}, prompts: {} } },
    });
    expect(catalog.resolveResource("ui://beta/report/view.html", "a")).toBeUndefined();
    expect(catalog.resolveResource("ui://alpha/report/view.html", "a")?.server).toBe("alpha");
    expect(catalog.allowsResource("beta", "skill://refunds/SKILL.md", "a")).toBe(false);
    expect(catalog.extensionServers("io.modelcontextprotocol/skills", "a").map((s) => s.server)).toEqual([
      "alpha",
    ]);
  });

  it("keeps tools only an app calls from models, and finds an app's own name only when one server has it", () => {
    const catalog = Catalog.build([server("alpha"), server("beta")], {
      profiles: { a: { servers: ["alpha"], tools: {}, resources: {}, prompts: {} } },
    });
    expect(catalog.tools().map((t) => t.name)).toEqual([
      "alpha__show",
      "alpha__refresh",
      "beta__show",
      "beta__refresh",
    ]);
    expect(catalog.modelTools().map((t) => t.name)).toEqual(["alpha__show", "beta__show"]);
    expect(catalog.resolveAppTool("refresh")).toBeUndefined();
    expect(catalog.resolveAppTool("refresh", "a")?.name).toBe("alpha__refresh");
  });

  it("rewrites the URIs of results: reads, links and embedded resources, skill entries, directories", () => {
    const call = {
      content: [
        { type: "text", text: "x" },
        { type: "resource_link", uri: "ui://report/view.html", name: "r" },
        { type: "resource", resource: { uri: "skill://refunds/SKILL.md", text: "t" } },
      ],
    };
    expect(namespaceResult("tools/call", call, "alpha").content).toEqual([
      { type: "text", text: "x" },
      { type: "resource_link", uri: "ui://alpha/report/view.html", name: "r" },
      { type: "resource", resource: { uri: "skill://alpha/refunds/SKILL.md", text: "t" } },
    ]);
    const prompt = {
      messages: [
        { role: "user", content: { type: "text", text: "x" } },
        {
          role: "user",
          content: { type: "resource", resource: { uri: "ui://report/view.html", text: "<p>" } },
        },
      ],
    };
    expect(namespaceResult("prompts/get", prompt, "alpha").messages).toEqual([
      { role: "user", content: { type: "text", text: "x" } },
      {
        role: "user",
        content: { type: "resource", resource: { uri: "ui://alpha/report/view.html", text: "<p>" } },
      },
    ]);
    const plain = { content: [{ type: "text", text: "x" }] };
    expect(namespaceResult("tools/call", plain, "alpha")).toBe(plain);
    expect(
      namespaceResult(
        "skills/get",
        {
          skill: {
            uri: "skill://r/SKILL.md",
            resources: [{ uri: "skill://r/SKILL.md", digest: "d", size: 1 }],
          },
        },
        "alpha",
      ),
    ).toEqual({
      skill: {
        uri: "skill://alpha/r/SKILL.md",
        resources: [{ uri: "skill://alpha/r/SKILL.md", digest: "d", size: 1 }],
      },
    });
  });
});
