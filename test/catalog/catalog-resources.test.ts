import { describe, expect, it } from "vitest";
import { Catalog, qualifyUri } from "../../src/catalog/index.js";
import { resource, server, template } from "./fixtures.js";

function catalogWithResources(): Catalog {
  return Catalog.build([
    { ...server("docs", []), resources: [resource("file:///README.md"), resource("docs://guide")] },
    {
      ...server("fs", []),
      resources: [resource("file:///README.md"), resource("file:///src/main.ts")],
      resourceTemplates: [template("file:///{+path}")],
    },
    {
      ...server("users", []),
      resourceTemplates: [template("users://{id}/profile"), template("users://{id}")],
    },
  ]);
}

describe("Catalog resources", () => {
  it("keeps unique URIs as they are", () => {
    const catalog = catalogWithResources();
    expect(catalog.resolveResource("docs://guide")).toEqual({
      server: "docs",
      uri: "docs://guide",
      available: true,
      via: "listed",
    });
    expect(catalog.resources().map((r) => r.uri)).toContain("file:///src/main.ts");
  });

  it("lists a URI shared by several servers in qualified form, and reports it", () => {
    const catalog = catalogWithResources();
    const shared = catalog.resources().filter((r) => r.originalUri === "file:///README.md");
    expect(shared.map((r) => [r.server, r.uri])).toEqual([
      ["docs", qualifyUri("docs", "file:///README.md")],
      ["fs", qualifyUri("fs", "file:///README.md")],
    ]);
    for (const r of shared) {
      expect(catalog.resolveResource(r.uri)).toMatchObject({ server: r.server, uri: "file:///README.md" });
    }
    expect(catalog.collisions()).toEqual([
      {
        kind: "resource",
        name: "file:///README.md",
        members: [
          { server: "docs", originalName: "file:///README.md", exposedName: shared[0]!.uri },
          { server: "fs", originalName: "file:///README.md", exposedName: shared[1]!.uri },
        ],
      },
    ]);
  });

  it("routes a shared raw URI to the first server in server order", () => {
    const catalog = catalogWithResources();
    expect(catalog.resolveResource("file:///README.md")).toMatchObject({ server: "docs", via: "listed" });
    const reordered = Catalog.build(
      [
        { ...server("docs", []), resources: [resource("file:///README.md")] },
        { ...server("fs", []), resources: [resource("file:///README.md")] },
      ],
      { serverOrder: ["fs"] },
    );
    expect(reordered.resolveResource("file:///README.md")).toMatchObject({ server: "fs" });
  });

  it("routes qualified URIs to the named server even when not listed", () => {
    const catalog = catalogWithResources();
    expect(catalog.resolveResource(qualifyUri("users", "users://7/avatar"))).toEqual({
      server: "users",
      uri: "users://7/avatar",
      available: true,
      via: "qualified",
    });
    expect(catalog.resolveResource(qualifyUri("ghost", "x://y"))).toBeUndefined();
  });

  it("routes URIs matching a resource template to that template's server", () => {
    const catalog = catalogWithResources();
    expect(catalog.resolveResource("file:///deep/nested/file.txt")).toEqual({
      server: "fs",
      uri: "file:///deep/nested/file.txt",
      available: true,
      via: "template",
    });
    expect(catalog.resolveResource("users://42/profile")).toMatchObject({ server: "users", via: "template" });
    expect(catalog.resolveResource("users://42")).toMatchObject({ server: "users", via: "template" });
    expect(catalog.resolveResource("users://42/other/thing")).toBeUndefined();
    expect(catalog.resolveResource("nowhere://x")).toBeUndefined();
  });

  it("prefers listed resources over templates", () => {
    const catalog = Catalog.build([
      { ...server("a", []), resourceTemplates: [template("file:///{+path}")] },
      { ...server("b", []), resources: [resource("file:///exact")] },
    ]);
    expect(catalog.resolveResource("file:///exact")).toMatchObject({ server: "b", via: "listed" });
    expect(catalog.resolveResource("file:///other")).toMatchObject({ server: "a", via: "template" });
  });

  it("reports duplicate templates and routes them to the first server in order", () => {
    const catalog = Catalog.build([
      { ...server("b", []), resourceTemplates: [template("notes://{id}")] },
      { ...server("a", []), resourceTemplates: [template("notes://{id}")] },
    ]);
    expect(catalog.resourceTemplates().map((t) => [t.server, t.uriTemplate])).toEqual([
      ["a", "notes://{id}"],
      ["b", "notes://{id}"],
    ]);
    expect(catalog.resolveResource("notes://1")).toMatchObject({ server: "a" });
    expect(catalog.collisions().map((c) => [c.kind, c.name])).toEqual([["resourceTemplate", "notes://{id}"]]);
  });

  it("makes a URI unique again once the other server is gone", () => {
    const catalog = catalogWithResources();
    catalog.removeServer("docs");
    expect(catalog.resources().map((r) => r.uri)).toEqual(["file:///README.md", "file:///src/main.ts"]);
    expect(catalog.collisions()).toEqual([]);
  });
});
