import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/index.js";
import { issuesOf } from "../support/config-errors.js";

const read = (text: string) => parseConfig(text, { source: "mcplex.yaml", env: {} });

describe("catalog modes in the config", () => {
  it("reads mode and pin in serve, profiles and tokens", () => {
    const config = read(
      [
        "serve:\n  mode: search\n  pin: [workspace__read_file]",
        "profiles:\n  coder:\n    mode: code\n    pin: ['gh__*']",
        "tokens:\n  - token: a-token-of-sixteen-chars\n    mode: all",
        "servers: {}",
      ].join("\n"),
    );
    expect(config.serve).toMatchObject({ mode: "search", pin: ["workspace__read_file"] });
    expect(config.profiles.coder).toMatchObject({ mode: "code", pin: ["gh__*"] });
    expect(config.tokens[0]).toMatchObject({ mode: "all" });
  });

  it("names a mode that does not exist, at its path, with the modes there are", () => {
    const issues = issuesOf("serve:\n  mode: lazy\nprofiles:\n  p:\n    mode: 3\nservers: {}\n");
    expect(issues).toContainEqual(
      expect.objectContaining({
        path: "serve.mode",
        message: expect.stringContaining("must be all, search or code"),
      }),
    );
    expect(issues.map((i) => i.path)).toContain("profiles.p.mode");
  });

  it("reads the code sandbox's limits and queue bounds under serve.code", () => {
    const config = read(
      "serve:\n  code: { timeout: 5s, queueTimeout: 2s, maxQueued: 4, maxToolCalls: 9 }\nservers: {}\n",
    );
    expect(config.serve?.code).toEqual({ wallMs: 5_000, queueMs: 2_000, maxQueued: 4, maxToolCalls: 9 });
    const issues = issuesOf("serve:\n  code: { queueTimeout: soon, maxQueued: -1 }\nservers: {}\n");
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(["serve.code.queueTimeout", "serve.code.maxQueued"]),
    );
  });
});

describe("result caching in the config", () => {
  it("reads a server's cache with per-tool rules", () => {
    const config = read(
      [
        "servers:",
        "  gh:",
        "    command: x",
        "    cache:",
        "      ttl: 60s",
        "      tools:",
        "        'search_*': { ttl: 5m }",
        "        list_things: { readOnly: true }",
        "        get_me: false",
        "serve:\n  cache: { maxEntries: 50, maxBytes: 1048576 }",
      ].join("\n"),
    );
    expect(config.servers[0]?.cache).toEqual({
      ttl: 60_000,
      tools: { "search_*": { ttl: 300_000 }, list_things: { readOnly: true }, get_me: false },
    });
    expect(config.serve?.cache).toEqual({ maxEntries: 50, maxBytes: 1_048_576 });
  });

  it("asks for a ttl, and names wrong tool rules at their path", () => {
    const issues = issuesOf(
      "servers:\n  gh:\n    command: x\n    cache:\n      tools:\n        a: { ttl: soon, readonly: true }\n",
    );
    expect(issues).toContainEqual(
      expect.objectContaining({ path: "servers.gh.cache", message: expect.stringContaining('needs "ttl"') }),
    );
    expect(issues.map((i) => i.path)).toEqual(
      expect.arrayContaining(["servers.gh.cache.tools.a.ttl", "servers.gh.cache.tools.a.readonly"]),
    );
  });
});
