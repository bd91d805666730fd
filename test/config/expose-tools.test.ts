import { describe, expect, it } from "vitest";
import { compileToolFilter } from "../../src/catalog/tool-filter.js";
import { EXPOSED_PROFILE, exposeTools } from "../../src/config/expose-tools.js";
import type { McplexConfig } from "../../src/config/types.js";
import { configOf } from "../support/config.js";

const names = ["memory__read_graph", "memory__search_nodes", "memory__create_entities", "gh__list_issues"];
const visible = (config: McplexConfig, profile: string) =>
  names.filter(compileToolFilter(config.profiles[profile]?.tools));

describe("exposeTools", () => {
  it("adds a profile of the globs for clients that name none", () => {
    const config = exposeTools(configOf([]), ["memory__read_*", "gh__*"]);
    expect(visible(config, EXPOSED_PROFILE)).toEqual(["memory__read_graph", "gh__list_issues"]);
  });

  it("narrows each profile to the globs, keeping its own allow and deny lists", () => {
    const config = exposeTools(
      configOf([], {
        profiles: {
          open: { tools: {} },
          memory: { tools: { allow: ["memory__*"], deny: ["*__create_*"] } },
          named: { servers: ["gh"], tools: { deny: ["gh__list_*"] } },
        },
      }),
      ["memory__read_graph", "*__create_entities", "gh__*"],
    );
    expect(visible(config, "open")).toEqual([
      "memory__read_graph",
      "memory__create_entities",
      "gh__list_issues",
    ]);
    expect(visible(config, "memory")).toEqual(["memory__read_graph"]);
    // Its servers list still scopes it to gh, whose one tool here its own deny list removes.
    expect(visible(config, "named")).toEqual(["memory__read_graph", "memory__create_entities"]);
    expect(config.profiles.named?.servers).toEqual(["gh"]);
  });

  it("binds tokens without a profile to the exposed tools, keeping what they may read", () => {
    const config = exposeTools(
      configOf([], {
        profiles: { p: { tools: {} } },
        tokens: [{ token: "t-unbound-123456" }, { token: "t-bound-1234567", profile: "p" }],
      }),
      ["memory__*"],
    );
    expect(config.tokens).toEqual([
      { token: "t-unbound-123456", profile: EXPOSED_PROFILE, operator: true },
      { token: "t-bound-1234567", profile: "p" },
    ]);
  });

  it("leaves the config as it is without globs", () => {
    const original = configOf([], { profiles: { p: { tools: { allow: ["x"] } } } });
    expect(exposeTools(original, [])).toBe(original);
  });
});
