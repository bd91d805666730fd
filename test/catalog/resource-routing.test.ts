import { UriTemplate } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { compileUriTemplate, parseQualifiedUri, qualifyUri } from "../../src/catalog/index.js";

describe("qualified URIs", () => {
  it("round-trip any server name and URI", () => {
    const cases: Array<[string, string]> = [
      ["docs", "file:///README.md"],
      ["we/ird server", "x://a/b?c=d#e"],
      ["s", "mcplex://other/thing"],
      ["日本", "urn:🙂"],
    ];
    for (const [server, uri] of cases)
      expect(parseQualifiedUri(qualifyUri(server, uri))).toEqual({ server, uri });
  });

  it("reject URIs that are not qualified or are malformed", () => {
    expect(parseQualifiedUri("file:///a")).toBeUndefined();
    expect(parseQualifiedUri("mcplex://noslash")).toBeUndefined();
    expect(parseQualifiedUri("mcplex:///x")).toBeUndefined();
    expect(parseQualifiedUri("mcplex://s/%E0%A4%A")).toBeUndefined();
  });
});

describe("compileUriTemplate", () => {
  it("matches level-1 and {+var} templates like the SDK's UriTemplate", () => {
    const cases: Array<[string, string]> = [
      ["file:///{path}", "file:///a/b"],
      ["file:///{path}", "file:///a"],
      ["file:///{+path}", "file:///a/b"],
      ["users://{id}/profile", "users://42/profile"],
      ["users://{id}/profile", "users://42/x"],
      ["users://{id}", "users://"],
      ["a.b://{x}", "aXb://1"],
      ["repo://{owner}/{name}", "repo://me/proj"],
      ["repo://{owner}/{name}", "repo://me"],
    ];
    for (const [template, uri] of cases) {
      expect(compileUriTemplate(template)(uri), `${template} ~ ${uri}`).toBe(
        new UriTemplate(template).match(uri) !== null,
      );
    }
  });

  it("treats query expressions as optional", () => {
    const match = compileUriTemplate("search://{q}{?limit,page}");
    expect(match("search://cats")).toBe(true);
    expect(match("search://cats?limit=3&page=2")).toBe(true);
    expect(match("other://cats")).toBe(false);
  });

  it("matches nothing for malformed templates", () => {
    expect(compileUriTemplate("x://{")("x://{")).toBe(false);
    expect(compileUriTemplate("x://{a b}")("x://1")).toBe(false);
    expect(compileUriTemplate("x://}")("x://}")).toBe(false);
  });

  it("matches a template without expressions only literally", () => {
    expect(compileUriTemplate("x://(a)+")("x://(a)+")).toBe(true);
    expect(compileUriTemplate("x://(a)+")("x://aa")).toBe(false);
  });
});
