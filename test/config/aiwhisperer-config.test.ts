// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config texts under test hold ${...} references

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkConfig, convertConfig, loadConfig, parseConfig } from "../../src/config/index.js";
import { errorOf as configErrorOf } from "../support/config-errors.js";

const errorOf = (text: string) => configErrorOf(text, { source: "mcp_client.yaml" });

// test/fixtures/config/aiwhisperer-mcp_client.yaml is AIWhisperer's seed config, verbatim:
// config/mcp_client.yaml of the public repository DeanoC/AIWhisperer. Its `mcp.client.enabled`
// turns the application's MCP client off, and a server's `timeout` is the seconds its stdio
// transport waits for each request's answer (a float: `asyncio.wait_for(..., timeout=30.0)`).
const FIXTURE = fileURLToPath(new URL("../fixtures/config/aiwhisperer-mcp_client.yaml", import.meta.url));
const seed = () => readFile(FIXTURE, "utf8");
const enabled = async () => (await seed()).replace("enabled: false", "enabled: true");
const defaults = { enabled: true, timeout: 60_000, startTimeout: 30_000, lazy: false, tools: {} };
const PROFILES = {
  alice: { servers: ["filesystem"], tools: {} },
  eamonn: { servers: ["filesystem", "github", "websearch"], tools: {} },
  patricia: { servers: ["filesystem", "github"], tools: {} },
  debbie: { servers: ["filesystem", "github", "websearch"], tools: {} },
};

describe("AIWhisperer's mcp_client.yaml", () => {
  it("loads as written: enabled: false gives no servers, needs none of their variables, and names them", async () => {
    // No GITHUB_TOKEN: nothing of a disabled block is used, so nothing of it must be set.
    const config = await loadConfig({ config: FIXTURE, env: {} });
    expect(config.format).toBe("mcp-client-servers");
    expect(config.servers).toEqual([]);
    expect(config.disabledBlock).toEqual({
      path: "mcp.client.enabled",
      servers: ["filesystem", "github", "websearch"],
    });
    expect(config.profiles).toEqual(PROFILES);
  });

  it("config check says the block is disabled, and warns of nothing else", async () => {
    const check = await checkConfig({ config: FIXTURE, env: {} });
    if (!check.ok) throw check.error;
    expect(check.summary.servers).toEqual([]);
    expect(check.summary.warnings).toEqual([
      {
        path: "mcp.client.enabled",
        message:
          "is false: the block is disabled, so its servers (filesystem, github, websearch) are checked but not used; set it to true to use them",
      },
    ]);
  });

  it("with enabled: true gives the servers, timeout: 30.0 as a request timeout of 30 000 ms", async () => {
    const config = parseConfig(await enabled(), {
      source: "mcp_client.yaml",
      env: { GITHUB_TOKEN: "ghp_aiWhispererToken42" },
    });
    expect(config.disabledBlock).toBeUndefined();
    expect(config.servers).toEqual([
      {
        ...defaults,
        name: "filesystem",
        transport: "stdio",
        command: "mcp-server-filesystem",
        args: ["--root", "/tmp/safe"],
        env: {},
        timeout: 30_000,
      },
      {
        ...defaults,
        name: "github",
        transport: "stdio",
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-github"],
        env: { GITHUB_TOKEN: "ghp_aiWhispererToken42" },
      },
      {
        ...defaults,
        name: "websearch",
        transport: "stdio",
        command: "mcp-server-websearch",
        args: [],
        env: {},
      },
    ]);
    expect(config.profiles).toEqual(PROFILES);
    expect(config.secrets).toContain("ghp_aiWhispererToken42");
  });

  it("reads the timeout of its commented websocket example, and a fractional one, in seconds", () => {
    const text =
      "mcp:\n  client:\n    enabled: true\n    servers:\n" +
      '      - { name: remote-tools, transport: websocket, url: "ws://localhost:3002/mcp", timeout: 60.0 }\n' +
      "      - { name: quick, command: [x], timeout: 2.5 }\n" +
      '      - { name: from-env, command: [y], timeout: "${T:-45}" }\n';
    const servers = parseConfig(text, { source: "mcp_client.yaml", env: {} }).servers;
    expect(servers.map((s) => [s.name, s.timeout])).toEqual([
      ["remote-tools", 60_000],
      ["quick", 2_500],
      ["from-env", 45_000],
    ]);
  });

  it("refuses a timeout that is not seconds and an enabled that is not true or false", () => {
    const error = errorOf(
      "mcp:\n  client:\n    enabled: sometimes\n    servers:\n" +
        '      - { name: a, command: [x], timeout: "30s" }\n      - { name: b, command: [y], timeout: 0 }\n',
    );
    const at = (path: string) => error.issues.find((i) => i.path === path)?.message;
    expect(at("mcp.client.enabled")).toBe('must be true or false, not "sometimes"');
    expect(at("mcp.client.servers[0].timeout")).toBe(
      'must be the request timeout in seconds, such as 30.0 (more than 0, at most 24 days), not "30s"',
    );
    expect(at("mcp.client.servers[1].timeout")).toContain("must be the request timeout in seconds");
  });

  it("still checks a disabled block: a misspelt key in it is an error", () => {
    const error = errorOf(
      "mcp:\n  client:\n    enabled: false\n    servers:\n      - { name: a, command: [x], timout: 5 }\n",
    );
    expect(error.issues.find((i) => i.path === "mcp.client.servers[0].timout")?.message).toContain(
      'unknown key "timout"; did you mean "timeout"?',
    );
  });

  it("converts, enabled, to an mcplex.yaml with the same servers and timeouts", async () => {
    const env = { GITHUB_TOKEN: "ghp_aiWhispererToken42" };
    const original = parseConfig(await enabled(), { source: "mcp_client.yaml", env });
    const { yaml } = convertConfig(await enabled(), { source: "mcp_client.yaml", env });
    expect(yaml).toContain("timeout: 30000");
    const converted = parseConfig(yaml, { source: "mcplex.yaml", env });
    expect(converted.servers).toEqual(original.servers);
    expect(converted.profiles).toEqual(original.profiles);
  });
});
