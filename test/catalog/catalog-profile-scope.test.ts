import { describe, expect, it } from "vitest";
import { Catalog, qualifyUri } from "../../src/catalog/index.js";
import type { ProfileConfig } from "../../src/config/types.js";
import { prompt, resource, server, template } from "./fixtures.js";

/** Two servers with tools, resources, templates and prompts, plus one with resources only. */
function catalog(profiles: Record<string, ProfileConfig>): Catalog {
  return Catalog.build(
    [
      {
        ...server("mine", ["echo"]),
        prompts: [prompt("greet")],
        resources: [resource("test://mine/a"), resource("test://shared")],
        resourceTemplates: [template("test://mine/{id}")],
      },
      {
        ...server("other", ["secret_tool"]),
        prompts: [prompt("leak")],
        resources: [resource("test://other/a"), resource("test://shared")],
        resourceTemplates: [template("test://other/{id}")],
      },
      {
        ...server("docs", []),
        resources: [resource("docs://readme")],
        prompts: [prompt("explain")],
      },
    ],
    { profiles },
  );
}

const toolsOnly = { agent: { tools: { allow: ["mine__*"] } } };

describe("Catalog profile scope over resources and prompts", () => {
  it("shows a tool-glob profile only the resources, templates and prompts of servers it has tools of", () => {
    const c = catalog(toolsOnly);
    expect(c.prompts("agent").map((p) => p.name)).toEqual(["mine__greet"]);
    expect(c.resources("agent").map((r) => r.server)).toEqual(["mine", "mine"]);
    expect(c.resourceTemplates("agent").map((t) => t.uriTemplate)).toEqual(["test://mine/{id}"]);
    expect(c.reaches("mine", "agent")).toBe(true);
    expect(c.reaches("other", "agent")).toBe(false);
    expect(c.reaches("docs", "agent")).toBe(false);
  });

  it("refuses every URI form of another server's resource like a missing one", () => {
    const c = catalog(toolsOnly);
    const refused = [
      "test://other/a",
      qualifyUri("other", "test://other/a"),
      qualifyUri("other", "test://shared"),
      // Percent-encoding the server name differently still names it.
      "mcplex://%6Fther/test%3A%2F%2Fother%2Fa",
      "mcplex://other/test://other/a",
      "test://other/42",
      qualifyUri("other", "test://other/42"),
      qualifyUri("docs", "docs://readme"),
      "docs://readme",
    ];
    for (const uri of refused) expect(c.resolveResource(uri, "agent"), uri).toBeUndefined();
    // The raw shared URI goes to the server the profile reaches, not the first in order.
    expect(c.resolveResource("test://shared", "agent")).toMatchObject({ server: "mine" });
    expect(c.resolveResource("test://mine/7", "agent")).toMatchObject({ server: "mine", via: "template" });
    expect(c.resolveResource(qualifyUri("mine", "test://mine/a"), "agent")).toMatchObject({ server: "mine" });
  });

  it("refuses another server's prompts and templates as completion targets", () => {
    const c = catalog(toolsOnly);
    expect(c.resolvePrompt("other__leak", "agent")).toBeUndefined();
    expect(c.resolvePrompt("docs__explain", "agent")).toBeUndefined();
    expect(c.resolvePrompt("mine__greet", "agent")).toMatchObject({ server: "mine" });
    expect(c.resolveResourceTemplate("test://other/{id}", "agent")).toBeUndefined();
    expect(c.resolveResourceTemplate("test://mine/{id}", "agent")).toMatchObject({ server: "mine" });
  });

  it("reaches a server without tools when the profile names it", () => {
    const c = catalog({ docs: { servers: ["docs", "mine"], tools: { allow: ["mine__*"] } } });
    expect(c.reaches("docs", "docs")).toBe(true);
    expect(c.resolveResource("docs://readme", "docs")).toMatchObject({ server: "docs" });
    expect(c.resolvePrompt("docs__explain", "docs")).toMatchObject({ server: "docs" });
    expect(c.reaches("other", "docs")).toBe(false);
  });

  it("reaches every server when the profile has no tool allow list", () => {
    const c = catalog({ open: { tools: { deny: ["*__secret_*"] } } });
    expect(c.servers().every((s) => c.reaches(s, "open"))).toBe(true);
    expect(c.resolvePrompt("other__leak", "open")).toBeDefined();
  });

  it("refines the reach with resource globs over URIs and prompt globs over exposed names", () => {
    const c = catalog({
      narrow: {
        tools: { allow: ["*"] },
        resources: { allow: ["test://mine/*"], deny: ["test://mine/secret*"] },
        prompts: { deny: ["other__*"] },
      },
    });
    expect(c.resources("narrow").map((r) => r.uri)).toEqual(["test://mine/a"]);
    // Globs match a template's text as a flat string.
    expect(c.resourceTemplates("narrow").map((t) => t.uriTemplate)).toEqual(["test://mine/{id}"]);
    expect(c.resolveResource("test://mine/9", "narrow")).toMatchObject({ server: "mine" });
    expect(c.resolveResource("test://mine/secret1", "narrow")).toBeUndefined();
    expect(c.resolveResource(qualifyUri("mine", "test://shared"), "narrow")).toBeUndefined();
    expect(c.resolveResource("test://other/a", "narrow")).toBeUndefined();
    // docs has no tools, so an allow list (even "*") does not select it: only `servers` would.
    expect(c.prompts("narrow").map((p) => p.name)).toEqual(["mine__greet"]);
    expect(c.resolvePrompt("other__leak", "narrow")).toBeUndefined();
  });

  it("follows the servers' tools and the profiles as they change", () => {
    const c = catalog(toolsOnly);
    expect(c.resolvePrompt("other__leak", "agent")).toBeUndefined();
    c.setServer({ ...server("other", ["secret_tool", "x"]), prefix: "mine", prompts: [prompt("leak")] });
    // Renamed into the profile's globs: its tools now pass, so its prompts are reachable.
    expect(c.reaches("other", "agent")).toBe(true);
    expect(c.resolvePrompt("mine__leak", "agent")).toMatchObject({ server: "other" });
    c.setProfiles({ agent: { tools: { allow: ["nothing__*"] } } });
    expect(c.reaches("mine", "agent")).toBe(false);
    expect(c.resources("agent")).toEqual([]);
  });

  it("keeps the whole catalog without a profile", () => {
    const c = catalog(toolsOnly);
    expect(c.resolveResource("test://other/a")).toMatchObject({ server: "other" });
    expect(c.resolvePrompt("other__leak")).toBeDefined();
    expect(c.reaches("docs")).toBe(true);
  });
});
