import { describe, expect, it } from "vitest";
import { ownersOfName } from "../../src/catalog/tool-naming.js";

describe("ownersOfName", () => {
  it("reads the owner from the prefix, without any listing", () => {
    expect(ownersOfName("github__search", [{ name: "fs" }, { name: "github" }])).toEqual(["github"]);
  });

  it("uses the configured prefix, sanitised as the catalog does", () => {
    expect(ownersOfName("g_h__search", [{ name: "github", prefix: "g.h" }, { name: "g_h_other" }])).toEqual([
      "github",
    ]);
  });

  it("gives every server whose prefix begins the name when one prefix begins another", () => {
    expect(ownersOfName("a__b__tool", [{ name: "a" }, { name: "a__b" }, { name: "c" }])).toEqual([
      "a",
      "a__b",
    ]);
  });

  it("cannot tell when a server has no prefix, or no prefix matches", () => {
    expect(ownersOfName("github__search", [{ name: "github" }, { name: "fs", prefix: "" }])).toBeUndefined();
    expect(ownersOfName("search", [{ name: "github" }])).toBeUndefined();
    expect(ownersOfName("githubsearch", [{ name: "github" }])).toBeUndefined();
  });
});
