import { describe, expect, it } from "vitest";
import { Catalog } from "../../src/catalog/index.js";
import { ConfigError } from "../../src/errors.js";
import { prompt, resource, server, template } from "./fixtures.js";

function catalog(): Catalog {
  return Catalog.build(
    [
      {
        ...server("github", ["search_code", "create_issue", "delete_repo"]),
        prompts: [prompt("review")],
        resources: [resource("gh://repo")],
      },
      {
        ...server("fs", ["read_file", "write_file"]),
        prompts: [prompt("summarise")],
        resourceTemplates: [template("file:///{+path}")],
      },
    ],
    {
      profiles: {
        reader: { tools: { allow: ["*__read_*", "*__search_*"] } },
        github: { servers: ["github"], tools: { deny: ["github__delete_*"] } },
        everything: { tools: {} },
      },
    },
  );
}

describe("Catalog profiles", () => {
  it("lists everything without a profile", () => {
    expect(catalog().tools()).toHaveLength(5);
  });

  it("filters tools by globs on exposed names", () => {
    expect(
      catalog()
        .tools("reader")
        .map((t) => t.name),
    ).toEqual(["fs__read_file", "github__search_code"]);
    expect(catalog().tools("everything")).toHaveLength(5);
  });

  it("restricts tools, prompts, resources and templates to the profile's servers", () => {
    const c = catalog();
    expect(c.tools("github").map((t) => t.name)).toEqual(["github__search_code", "github__create_issue"]);
    expect(c.prompts("github").map((p) => p.name)).toEqual(["github__review"]);
    expect(c.resources("github").map((r) => r.uri)).toEqual(["gh://repo"]);
    expect(c.resourceTemplates("github")).toEqual([]);
    expect(c.resourceTemplates("reader")).toHaveLength(1);
  });

  it("makes names outside the profile unresolvable through it", () => {
    const c = catalog();
    expect(c.resolveTool("fs__write_file", "reader")).toBeUndefined();
    expect(c.resolveTool("fs__read_file", "reader")).toMatchObject({
      server: "fs",
      originalName: "read_file",
    });
    expect(c.resolveTool("github__delete_repo", "github")).toBeUndefined();
    expect(c.resolveTool("github__delete_repo")).toBeDefined();
    expect(c.resolvePrompt("fs__summarise", "github")).toBeUndefined();
    expect(c.resolvePrompt("fs__summarise", "reader")).toBeDefined();
    expect(c.resolveResource("file:///etc/hosts", "github")).toBeUndefined();
    expect(c.resolveResource("file:///etc/hosts", "reader")).toMatchObject({ server: "fs" });
  });

  it("gives the same names through every profile", () => {
    const c = catalog();
    const all = new Map(c.tools().map((t) => [t.originalName, t.name]));
    for (const profile of c.profiles())
      for (const t of c.tools(profile)) expect(t.name).toBe(all.get(t.originalName));
  });

  it("throws a ConfigError naming an unknown profile and the defined ones", () => {
    const c = catalog();
    expect(() => c.tools("admin")).toThrow(ConfigError);
    try {
      c.resolveTool("github__search_code", "admin");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const err = e as ConfigError;
      expect(err.message).toContain('"admin"');
      expect(err.hint).toBe("Defined profiles: reader, github, everything.");
      expect(err.path).toBe("profiles.admin");
    }
    expect(() => new Catalog().prompts("x")).toThrow(/Unknown profile "x"/);
  });

  it("applies replaced profiles", () => {
    const c = catalog();
    c.setProfiles({ reader: { servers: ["fs"], tools: {} } });
    expect(c.tools("reader").map((t) => t.name)).toEqual(["fs__read_file", "fs__write_file"]);
    expect(() => c.tools("github")).toThrow(ConfigError);
  });
});
