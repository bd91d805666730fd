import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mcplexHome } from "../../src/storage/mcplex-home.js";

describe("mcplexHome", () => {
  it("is $MCPLEX_HOME, else $XDG_CONFIG_HOME/mcplex, else ~/.config/mcplex", () => {
    expect(mcplexHome({ MCPLEX_HOME: "/m", XDG_CONFIG_HOME: "/x" })).toBe("/m");
    expect(mcplexHome({ XDG_CONFIG_HOME: "/x" })).toBe(join("/x", "mcplex"));
    expect(mcplexHome({ MCPLEX_HOME: "", XDG_CONFIG_HOME: "" })).toBe(join(homedir(), ".config", "mcplex"));
  });
});
