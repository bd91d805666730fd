import { describe, expect, it } from "vitest";
import { compileToolFilter } from "../../src/catalog/index.js";

describe("compileToolFilter", () => {
  it("allows everything when there is no filter or no allow list", () => {
    expect(compileToolFilter(undefined)("anything")).toBe(true);
    expect(compileToolFilter({})("anything")).toBe(true);
    expect(compileToolFilter({ deny: [] })("anything")).toBe(true);
  });

  it("allows only names matching the allow globs", () => {
    const visible = compileToolFilter({ allow: ["read_*", "list"] });
    expect(visible("read_file")).toBe(true);
    expect(visible("list")).toBe(true);
    expect(visible("write_file")).toBe(false);
  });

  it("hides names matching the deny globs", () => {
    const visible = compileToolFilter({ deny: ["*delete*"] });
    expect(visible("delete_repo")).toBe(false);
    expect(visible("create_repo")).toBe(true);
  });

  it("lets deny win over allow", () => {
    const visible = compileToolFilter({ allow: ["repo_*"], deny: ["repo_delete"] });
    expect(visible("repo_create")).toBe(true);
    expect(visible("repo_delete")).toBe(false);
  });

  it("treats an empty allow list as allowing nothing", () => {
    expect(compileToolFilter({ allow: [] })("x")).toBe(false);
  });

  it("treats names as flat strings: a star matches dots and slashes", () => {
    expect(compileToolFilter({ allow: ["git.*"] })("git.log")).toBe(true);
    expect(compileToolFilter({ allow: ["git*"] })("git.log")).toBe(true);
    expect(compileToolFilter({ allow: ["*"] })(".hidden")).toBe(true);
    expect(compileToolFilter({ allow: ["fs*"] })("fs/read/all")).toBe(true);
    expect(compileToolFilter({ allow: ["fs/*"] })("fs/read")).toBe(true);
    expect(compileToolFilter({ deny: ["fs/*"] })("fsx")).toBe(true);
  });

  it("tolerates malformed globs", () => {
    expect(() => compileToolFilter({ allow: ["[", "a{"], deny: ["**("] })).not.toThrow();
  });
});
