// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { convertConfig, loadConfig, parseConfig } from "../../src/config/index.js";
import { ConfigError } from "../../src/errors.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/config/${name}`, import.meta.url));

const env = {
  MEMORY_FILE: "/data/memory.json",
  DOCS_TOKEN: "docs-token-abcdef",
  PROJECT_DIR: "/work/project",
  REMOTE_TOKEN: "cursor-remote-token",
  SEARCH_TOKEN: "search-token-1234",
};
const secrets: Record<string, string> = {
  github: "ghp_convertSecret999",
  perplexity: "pplx-secret-value",
  "gateway-token": "gateway-token-abcdef123456",
};

/** Loads `name` as it is and as converted, under the same variables and secrets. */
async function roundTrip(name: string) {
  const original = await loadConfig({ config: fixture(name), env, secrets });
  const converted = convertConfig(readFileSync(fixture(name), "utf8"), { source: fixture(name), env });
  const reloaded = parseConfig(converted.yaml, {
    source: fixture("converted.yaml"),
    env,
    secretResolver: (secret) => secrets[secret],
  });
  return { original, converted, reloaded };
}

describe("config convert", () => {
  it.each([
    ["app-mcp-client.yaml", "mcp-client-servers"],
    ["app-servers.json", "server-map"],
    ["app-agents.yaml", "mcp_servers"],
    ["claude-desktop.json", "mcpServers"],
    ["cursor-mcp.json", "mcpServers"],
    ["vscode-mcp.json", "vscode"],
    ["mcplex.yaml", "mcplex"],
  ])("writes %s as an mcplex file that loads to the same servers and profiles", async (name, format) => {
    const { original, converted, reloaded } = await roundTrip(name);
    expect(converted.format).toBe(format);
    expect(original.format).toBe(format);
    expect(reloaded.format).toBe("mcplex");
    expect(reloaded.servers).toEqual(original.servers);
    expect(reloaded.profiles).toEqual(original.profiles);
    expect(reloaded.tokens).toEqual(original.tokens);
    expect(original.servers.length).toBeGreaterThan(0);
  });

  it("writes every block of our own files: caches, catalog modes, pins, serve settings", () => {
    const text = [
      "servers:",
      "  gh:",
      "    command: gh-mcp",
      "    cache: { ttl: 30s, tools: { 'get_*': { ttl: 2m, readOnly: true }, list_secrets: false } }",
      "available:",
      "  memory: { command: npx, args: [-y, '@modelcontextprotocol/server-memory'], lazy: true }",
      "profiles:",
      "  research: { servers: [gh], mode: search, pin: ['gh__get_*'], tools: { deny: ['*_delete'] } }",
      "tokens:",
      "  - { token: '${secret:t}', profile: research, mode: code }",
      "serve: { readyWait: 2s, mode: search, pin: ['gh__*'], cache: { maxEntries: 100 } }",
      "",
    ].join("\n");
    const original = parseConfig(text, { source: "mcplex.yaml", secretResolver: () => "token-value-123456" });
    const { yaml } = convertConfig(text, { source: "mcplex.yaml", env: {} });
    const back = parseConfig(yaml, { source: "mcplex.yaml", secretResolver: () => "token-value-123456" });
    expect(back.servers).toEqual(original.servers);
    expect(back.profiles).toEqual(original.profiles);
    expect(back.tokens).toEqual(original.tokens);
    expect(back.serve).toEqual(original.serve);
    expect(back.available).toEqual(original.available);
    expect(original.servers[0]).toHaveProperty("cache");
    expect(original.available).toHaveLength(1);
  });

  it("keeps variable and secret references as written, never their values", async () => {
    for (const name of ["app-mcp-client.yaml", "app-servers.json", "app-agents.yaml", "vscode-mcp.json"]) {
      const { converted } = await roundTrip(name);
      for (const value of [...Object.values(env), ...Object.values(secrets)])
        expect(converted.yaml).not.toContain(value);
    }
    const client = (await roundTrip("app-mcp-client.yaml")).converted.yaml;
    expect(client).toContain("MEMORY_FILE_PATH: ${MEMORY_FILE:-/tmp/memory.json}");
    expect(client).toContain("GITHUB_TOKEN: ${secret:github}");
    const agents = (await roundTrip("app-agents.yaml")).converted.yaml;
    expect(agents).toContain("Authorization: Bearer ${DOCS_TOKEN}");
    expect(agents).toContain("${PROJECT_DIR}");
  });

  it("needs no variable set and no secret store: references are not expanded", () => {
    const text =
      'mcp_servers:\n  api:\n    url: "${API_URL}"\n    type: http\n    headers:\n      X-Key: ${secret:api}\n';
    const { yaml } = convertConfig(text, { source: "agents.yaml", env: {} });
    const back = parseConfig(yaml, {
      source: "mcplex.yaml",
      env: { API_URL: "https://api.example.com/mcp" },
      secretResolver: () => "k-123456",
    });
    expect(back.servers[0]).toMatchObject({
      transport: "streamable-http",
      url: "https://api.example.com/mcp",
      headers: { "X-Key": "k-123456" },
    });
  });

  it("asks for the variable of a URL whose transport it cannot tell without it", () => {
    const text = '{"api": {"url": "${API_URL}"}}';
    expect(() => convertConfig(text, { source: "servers.json", env: {} })).toThrow(
      'api.url: "${API_URL}" is not a URL with the variables set here; set them, or name the transport',
    );
    const { yaml } = convertConfig(text, { source: "servers.json", env: { API_URL: "wss://h/mcp" } });
    expect(yaml).toContain("url: ${API_URL}");
    expect(yaml).toContain("transport: websocket");
  });

  it("writes the profiles of agents' permissions as mcplex profiles", async () => {
    const { converted } = await roundTrip("app-mcp-client.yaml");
    const doc = parseConfig(converted.yaml, { source: "mcplex.yaml", env: {}, secretResolver: () => "x" });
    expect(doc.profiles.researcher).toEqual({ servers: ["memory", "search"], tools: {} });
  });

  it("reports a broken file with the path and the reference as written", () => {
    const text =
      "mcp:\n  client:\n    servers:\n      - { name: a, command: ['${input:key}'] }\n      - { name: b, comand: [x] }\n";
    let error: unknown;
    try {
      convertConfig(text, { source: "app.yaml", env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.find((i) => i.path === "mcp.client.servers[0].command[0]")?.message).toContain(
      '"${input:key}" is a VS Code prompt',
    );
    expect(issues.find((i) => i.path === "mcp.client.servers[1].comand")?.message).toContain(
      'did you mean "command"?',
    );
  });
});
