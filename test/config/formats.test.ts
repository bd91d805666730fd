// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/index.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/config/${name}`, import.meta.url));
const fixtureDir = fileURLToPath(new URL("../fixtures/config/", import.meta.url)).replace(/\/$/, "");
const defaults = { enabled: true, timeout: 60_000, startTimeout: 30_000, lazy: false, tools: {} };

describe("config formats", () => {
  it("reads a Claude Desktop mcpServers file as it is, honouring disabled", async () => {
    const config = await loadConfig({ config: fixture("claude-desktop.json"), env: {} });
    expect(config.format).toBe("mcpServers");
    expect(config.servers).toEqual([
      {
        name: "filesystem",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        env: {},
        ...defaults,
      },
      {
        name: "github",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_PERSONAL_ACCESS_TOKEN: "ghp_fixtureToken1234567890" },
        ...defaults,
      },
      {
        name: "old-search",
        transport: "stdio",
        command: "uvx",
        args: ["mcp-server-brave-search"],
        env: {},
        ...defaults,
        enabled: false,
      },
    ]);
    expect(config.secrets).toContain("ghp_fixtureToken1234567890");
    expect(config.profiles).toEqual({});
    expect(config.tokens).toEqual([]);
  });

  it("reads a Cursor file with remote servers, inferring the transport", async () => {
    const config = await loadConfig({
      config: fixture("cursor-mcp.json"),
      env: { REMOTE_TOKEN: "cursor-remote-token" },
    });
    expect(config.format).toBe("mcpServers");
    const byName = Object.fromEntries(config.servers.map((s) => [s.name, s]));
    expect(byName.remote).toEqual({
      name: "remote",
      transport: "streamable-http",
      url: "https://mcp.example.com/mcp",
      headers: { Authorization: "Bearer cursor-remote-token" },
      ...defaults,
    });
    expect(byName.legacy).toMatchObject({ transport: "sse", url: "http://localhost:8000/sse" });
    expect(byName.typed).toMatchObject({ transport: "sse" });
    expect(byName.socket).toMatchObject({ transport: "websocket", url: "wss://ws.example.com/mcp" });
    expect(byName.local).toMatchObject({
      transport: "stdio",
      args: ["server.js", "--port", "3000"],
      env: { LOG_LEVEL: "debug" },
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining(["Bearer cursor-remote-token", "cursor-remote-token"]),
    );
  });

  it("reads a VS Code file with inputs, comments and trailing commas", async () => {
    const config = await loadConfig({
      config: fixture("vscode-mcp.json"),
      env: {},
      secrets: { perplexity: "pplx-secret-value" },
    });
    expect(config.format).toBe("vscode");
    expect(config.servers).toEqual([
      {
        name: "perplexity",
        transport: "stdio",
        command: "npx",
        args: ["-y", "server-perplexity-ask"],
        env: { PERPLEXITY_API_KEY: "pplx-secret-value" },
        ...defaults,
      },
      {
        name: "api",
        transport: "streamable-http",
        url: "https://api.example.com/mcp",
        headers: { "X-Api-Key": "anonymous-key" },
        ...defaults,
      },
      { name: "events", transport: "sse", url: "http://localhost:3001/events", headers: {}, ...defaults },
    ]);
    expect(config.secrets).toEqual(expect.arrayContaining(["pplx-secret-value", "anonymous-key"]));
  });

  it("reads our YAML schema with every field and fills defaults", async () => {
    const config = await loadConfig({
      config: fixture("mcplex.yaml"),
      env: { SEARCH_TOKEN: "search-token-1234" },
      secrets: { github: "ghp_yamlSecret999", "gateway-token": "gateway-token-abcdef123456" },
    });
    expect(config.format).toBe("mcplex");
    expect(config.source).toBe(fixture("mcplex.yaml"));
    const [github, search, events, live, files] = config.servers;
    expect(github).toEqual({
      name: "github",
      transport: "stdio",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-github", "--port", "8080"],
      env: { GITHUB_TOKEN: "ghp_yamlSecret999", DEBUG: "true" },
      cwd: `${fixtureDir}/tools`,
      enabled: true,
      timeout: 30_000,
      startTimeout: 120_000,
      lazy: true,
      prefix: "gh",
      tools: { allow: ["search_*", "get_*"], deny: ["*_delete"] },
    });
    expect(search).toMatchObject({
      transport: "streamable-http",
      headers: { Authorization: "Bearer search-token-1234" },
      timeout: 500,
    });
    expect(events).toMatchObject({ transport: "sse", enabled: false });
    expect(live).toMatchObject({ transport: "websocket", prefix: "" });
    expect(files).toEqual({
      name: "files",
      transport: "workspace",
      root: `${fixtureDir}/project`,
      allowWrite: true,
      rules: [
        { pattern: "src/**", ops: ["read", "write"] },
        { pattern: "**/.env", ops: [] },
      ],
      ...defaults,
    });
    expect(config.profiles).toEqual({
      research: { servers: ["search", "live"], tools: { deny: ["*_write"] } },
      all: { tools: {} },
    });
    expect(config.tokens).toEqual([{ token: "gateway-token-abcdef123456", profile: "research" }]);
    expect(config.llm).toEqual({
      baseUrl: "http://localhost:11434/v1",
      model: "llama3.1",
      apiKey: "sk-local-default",
      provider: "ollama",
    });
    expect(config.secrets).toEqual(
      expect.arrayContaining([
        "ghp_yamlSecret999",
        "search-token-1234",
        "gateway-token-abcdef123456",
        "sk-local-default",
      ]),
    );
    expect(config.secrets).not.toContain("true");
  });

  it("reads our JSON schema, with http as an alias of streamable-http", async () => {
    const config = await loadConfig({ config: fixture("mcplex.json"), env: {} });
    expect(config.format).toBe("mcplex");
    expect(config.servers).toEqual([
      {
        name: "memory",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: {},
        ...defaults,
        timeout: 45_000,
      },
      {
        name: "docs",
        transport: "streamable-http",
        url: "http://localhost:9000/mcp",
        headers: {},
        ...defaults,
        startTimeout: 90_000,
      },
    ]);
    expect(config.profiles).toEqual({ reader: { servers: ["docs"], tools: {} } });
  });

  it("reads a profile's resource and prompt globs and an operator token", () => {
    const config = parseConfig(
      [
        "servers:\n  a:\n    command: x",
        "profiles:\n  agent:\n    tools: { allow: [a__*] }",
        "    resources: { allow: ['file:///docs/*'] }\n    prompts: { deny: [a__secret*] }",
        "tokens:\n  - { token: scrape-token-123456, profile: agent, operator: true }",
      ].join("\n"),
      { source: "a.yaml" },
    );
    expect(config.profiles).toEqual({
      agent: {
        tools: { allow: ["a__*"] },
        resources: { allow: ["file:///docs/*"] },
        prompts: { deny: ["a__secret*"] },
      },
    });
    expect(config.tokens).toEqual([{ token: "scrape-token-123456", profile: "agent", operator: true }]);
    expect(() =>
      parseConfig("servers:\n  a:\n    command: x\nprofiles:\n  p:\n    prompts: { allow: [''] }\n", {
        source: "a.yaml",
      }),
    ).toThrow(/profiles\.p\.prompts\.allow\[0\]/);
  });

  it("tells a VS Code servers file from ours by the transport type", () => {
    const vscode = parseConfig('{"servers": {"a": {"type": "stdio", "command": "x", "dev": {}}}}', {
      source: "a.json",
    });
    expect(vscode.format).toBe("vscode");
    const ours = parseConfig("servers:\n  a:\n    command: x\n", { source: "a.yaml" });
    expect(ours.format).toBe("mcplex");
    // With one of our top-level keys the file is ours, and `type: stdio` gets a precise fix.
    expect(() =>
      parseConfig("servers:\n  a:\n    type: stdio\n    command: x\nprofiles: {}\n", { source: "a.yaml" }),
    ).toThrow(/servers\.a\.type: "type" only takes "workspace".*transport: stdio/);
  });

  it("resolves ${workspaceFolder} in VS Code files to the working directory", () => {
    const config = parseConfig(
      '{"servers": {"a": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js"]}}}',
      { source: "mcp.json", cwd: "/repo", env: {} },
    );
    expect(config.servers[0]).toMatchObject({ args: ["/repo/server.js"] });
  });
});
