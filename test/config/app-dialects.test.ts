// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkConfig, loadConfig, parseConfig } from "../../src/config/index.js";
import type { ConfigError } from "../../src/errors.js";
import { errorOf as configErrorOf } from "../support/config-errors.js";

const errorOf = (text: string, source = "app.yaml") => configErrorOf(text, { source });

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/config/${name}`, import.meta.url));
const defaults = { enabled: true, timeout: 60_000, startTimeout: 30_000, lazy: false, tools: {} };

/** The message of the issue at `path`, or a list of the paths there are when none is there. */
function issueAt(error: ConfigError, path: string): string {
  const issue = error.issues.find((i) => i.path === path);
  if (issue === undefined) throw new Error(`no issue at ${path}; issues: ${JSON.stringify(error.issues)}`);
  return issue.message;
}

const client = (servers: string, extra = "") => `mcp:\n  client:\n    servers:\n${servers}${extra}`;

describe("mcp.client.servers files", () => {
  it("reads the servers list, splitting the command array, and makes agents' permissions profiles", async () => {
    const config = await loadConfig({
      config: fixture("app-mcp-client.yaml"),
      env: {},
      secrets: { github: "ghp_appClientSecret123" },
    });
    expect(config.format).toBe("mcp-client-servers");
    expect(config.servers).toEqual([
      {
        name: "memory",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: { MEMORY_FILE_PATH: "/tmp/memory.json" },
        ...defaults,
      },
      { name: "search", transport: "websocket", url: "ws://127.0.0.1:8765/mcp", headers: {}, ...defaults },
      {
        name: "github",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_TOKEN: "ghp_appClientSecret123" },
        ...defaults,
      },
    ]);
    expect(config.profiles).toEqual({
      researcher: { servers: ["memory", "search"], tools: {} },
      coder: { servers: ["github"], tools: {} },
    });
    expect(config.secrets).toContain("ghp_appClientSecret123");
  });

  it("reads agent_permissions at the top level of the document too", () => {
    const text = `${client("      - { name: a, transport: stdio, command: [x] }\n")}agent_permissions:\n  bot:\n    allowed_servers: [a]\n`;
    expect(parseConfig(text, { source: "app.yaml" }).profiles).toEqual({
      bot: { servers: ["a"], tools: {} },
    });
  });

  it("names an unknown key by its exact path with a suggestion", () => {
    const error = errorOf(
      client(
        "      - { name: a, command: [x] }\n      - { name: b, command: [y] }\n      - { name: c, comand: [z] }\n",
      ),
    );
    expect(issueAt(error, "mcp.client.servers[2].comand")).toContain(
      'unknown key "comand"; did you mean "command"?',
    );
    const block = errorOf(`${client("      - { name: a, command: [x] }\n")}    agent_permisions: {}\n`);
    expect(issueAt(block, "mcp.client.agent_permisions")).toContain('did you mean "agent_permissions"?');
  });

  it("refuses a command that is not a list, an empty one, and a stdio server without one", () => {
    const error = errorOf(
      client(
        "      - { name: a, command: npx -y x }\n      - { name: b, command: [] }\n      - { name: c, transport: stdio }\n",
      ),
    );
    expect(issueAt(error, "mcp.client.servers[0].command")).toContain(
      "must be a list holding the program and its arguments",
    );
    expect(issueAt(error, "mcp.client.servers[1].command")).toContain("is empty");
    expect(issueAt(error, "mcp.client.servers[2]")).toContain('is a stdio server and needs a "command"');
  });

  it("refuses a websocket server without a url, a wrong transport and a wrong env type", () => {
    const error = errorOf(
      client(
        "      - { name: a, transport: websocket }\n      - { name: b, transport: http, url: 'http://h/mcp' }\n      - { name: c, command: [x], env: [A] }\n      - { name: d, transport: websocket, url: 'http://h/mcp' }\n",
      ),
    );
    expect(issueAt(error, "mcp.client.servers[0]")).toContain('is a websocket server and needs a "url"');
    expect(issueAt(error, "mcp.client.servers[1].transport")).toContain("use one of: stdio, websocket");
    expect(issueAt(error, "mcp.client.servers[2].env")).toContain("must be a map");
    expect(issueAt(error, "mcp.client.servers[3].url")).toContain("needs a ws:// or wss:// URL");
  });

  it("refuses duplicate names, a missing name, a list that is not one, and unknown allowed servers", () => {
    const error = errorOf(
      client(
        "      - { name: a, command: [x] }\n      - { command: [y] }\n      - { name: a, command: [z] }\n",
        "    agent_permissions:\n      bot:\n        allowed_servers: [a, nope]\n",
      ),
    );
    expect(issueAt(error, "mcp.client.servers[2].name")).toContain(
      '"a" is also the name of mcp.client.servers[0]',
    );
    expect(issueAt(error, "mcp.client.servers[1].name")).toContain("is missing");
    expect(issueAt(error, "mcp.client.agent_permissions.bot.allowed_servers[1]")).toBe(
      'unknown server "nope"; the servers are: a',
    );
    expect(issueAt(errorOf("mcp:\n  client:\n    servers: {a: {}}\n"), "mcp.client.servers")).toContain(
      "must be a list",
    );
  });
});

describe("agents' permissions in several places", () => {
  it("refuses one agent given permissions twice, and an agent name mcplex cannot use", () => {
    const error = errorOf(
      `${client("      - { name: a, command: [x] }\n", "    agent_permissions:\n      bot: { allowed_servers: [a] }\n")}` +
        "  agent_permissions:\n    bot: { allowed_servers: [a] }\n    'my bot': { allowed_servers: [a] }\n    lazy: {}\n",
    );
    expect(issueAt(error, "mcp.agent_permissions.bot")).toBe(
      'agent "bot" has permissions in two places; keep one',
    );
    expect(issueAt(error, 'mcp.agent_permissions["my bot"]')).toContain('agent name "my bot" is not allowed');
    expect(issueAt(error, "mcp.agent_permissions.lazy")).toContain('needs "allowed_servers"');
  });
});

describe("bare server maps keyed by id", () => {
  it("reads every entry, using the id as the server's name and honouring enabled", async () => {
    const config = await loadConfig({
      config: fixture("app-servers.json"),
      env: { MEMORY_FILE: "/data/m.json" },
      secrets: { github: "ghp_appMapSecret123" },
    });
    expect(config.format).toBe("server-map");
    expect(config.servers).toEqual([
      {
        name: "memory",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: { MEMORY_FILE_PATH: "/data/m.json" },
        ...defaults,
      },
      {
        name: "weather",
        transport: "streamable-http",
        url: "https://weather.example.com/mcp",
        headers: {},
        ...defaults,
        enabled: false,
      },
      {
        name: "github",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_TOKEN: "ghp_appMapSecret123" },
        ...defaults,
      },
    ]);
    expect(config.profiles).toEqual({});
  });

  it("is not mistaken for our own file or another dialect", () => {
    expect(parseConfig('{"servers": {"a": {"command": "x"}}}', { source: "m.json" }).format).toBe("mcplex");
    expect(parseConfig('{"mcpServers": {"a": {"command": "x"}}}', { source: "m.json" }).format).toBe(
      "mcpServers",
    );
  });

  it("names unknown keys, wrong types, entries without command or url, and duplicate names", () => {
    const error = errorOf(
      JSON.stringify({
        a: { name: "A", comand: "x", command: "x" },
        b: { name: "B", command: "x", args: "-y", enabled: "yes" },
        c: { name: "C" },
        d: { name: "A", command: "y" },
        e: { name: "E", url: "ftp://h/x" },
      }),
      "servers.json",
    );
    expect(issueAt(error, "a.comand")).toContain('unknown key "comand"; did you mean "command"?');
    expect(issueAt(error, "b.args")).toContain("must be a list of strings");
    expect(issueAt(error, "b.enabled")).toContain("must be true or false");
    expect(issueAt(error, "c")).toContain('needs "command" (a local server) or "url" (a remote one)');
    expect(issueAt(error, "d.name")).toBe('"A" is also the name of server "a"; names must be unique');
    expect(issueAt(error, "e.url")).toContain('scheme "ftp:" is not supported');
  });
});

describe("mcp_servers maps", () => {
  it("merges the agents' servers, one per definition, and makes a profile per agent", async () => {
    const config = await loadConfig({
      config: fixture("app-agents.yaml"),
      env: { DOCS_TOKEN: "docs-token-abcdef", PROJECT_DIR: "/work/project" },
    });
    expect(config.format).toBe("mcp_servers");
    expect(config.servers).toEqual([
      {
        name: "memory",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-memory"],
        env: {},
        ...defaults,
      },
      {
        name: "docs",
        transport: "streamable-http",
        url: "https://docs.example.com/mcp",
        headers: { Authorization: "Bearer docs-token-abcdef" },
        ...defaults,
      },
      { name: "events", transport: "sse", url: "http://127.0.0.1:8000/events", headers: {}, ...defaults },
      {
        name: "files",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/work/project"],
        env: {},
        ...defaults,
      },
    ]);
    expect(config.profiles).toEqual({
      researcher: { servers: ["memory", "docs", "events"], tools: {} },
      coder: { servers: ["memory", "docs", "files"], tools: {} },
    });
    expect(config.secrets).toContain("docs-token-abcdef");
  });

  it("reads a top-level mcp_servers map alone, without profiles", () => {
    const config = parseConfig("mcp_servers:\n  a:\n    command: x\n  b:\n    url: ws://h/mcp\n", {
      source: "a.yaml",
    });
    expect(config.servers.map((s) => [s.name, s.transport])).toEqual([
      ["a", "stdio"],
      ["b", "websocket"],
    ]);
    expect(config.profiles).toEqual({});
  });

  it("names unknown keys, bad types, stdio without command, remote without url by their paths", () => {
    const error = errorOf(
      "agent_config:\n  agent_settings:\n    bot:\n      mcp_servers:\n" +
        "        a: { type: stdio, comand: x }\n" +
        "        b: { type: websocket, url: 'ws://h' }\n" +
        "        c: { type: http }\n" +
        "        d: { command: x, args: -y }\n" +
        "        e: { type: stdio, command: x, url: 'http://h' }\n",
    );
    const base = "agent_config.agent_settings.bot.mcp_servers";
    expect(issueAt(error, `${base}.a.comand`)).toContain('did you mean "command"?');
    expect(issueAt(error, `${base}.a`)).toContain('is a stdio server and needs a "command"');
    expect(issueAt(error, `${base}.b.type`)).toContain("use one of: stdio, sse, http");
    expect(issueAt(error, `${base}.c`)).toContain('is a http server and needs a "url"');
    expect(issueAt(error, `${base}.d.args`)).toContain("must be a list of strings");
    expect(issueAt(error, `${base}.e.url`)).toContain("does not apply to a stdio server");
  });

  it("refuses one name defined differently by two agents", () => {
    const error = errorOf(
      "agent_config:\n  agent_settings:\n    one:\n      mcp_servers:\n        fs: { command: x }\n" +
        "    two:\n      mcp_servers:\n        fs: { command: y }\n",
    );
    expect(issueAt(error, "agent_config.agent_settings.two.mcp_servers.fs")).toBe(
      'server "fs" is also defined at agent_config.agent_settings.one.mcp_servers.fs with a different definition; rename one of them',
    );
  });
});

describe("config check of applications' files", () => {
  it("gives warnings the path where the server is written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcplex-app-check-"));
    try {
      const client = join(dir, "agent.yaml");
      await writeFile(
        client,
        "mcp:\n  client:\n    servers:\n      - { name: a, command: [no-such-program-mcplex] }\n",
      );
      const map = join(dir, "servers.json");
      await writeFile(map, '{"a": {"command": "no-such-program-mcplex"}}');
      const agents = join(dir, "agents.yaml");
      await writeFile(agents, "mcp_servers:\n  a: { command: no-such-program-mcplex }\n");
      const paths = async (config: string) => {
        const check = await checkConfig({ config, env: { PATH: "/nonexistent" } });
        return check.ok ? check.summary.warnings.map((w) => w.path) : check.issues;
      };
      expect(await paths(client)).toEqual(["mcp.client.servers[0].command"]);
      expect(await paths(map)).toEqual(["a.command"]);
      expect(await paths(agents)).toEqual(["mcp_servers.a.command"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
