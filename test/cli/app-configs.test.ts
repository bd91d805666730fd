import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, parseConfig } from "../../src/config/index.js";
import { runCli } from "../support/cli.js";
import { COMMANDS } from "../support/gateway.js";

/**
 * Applications' config files, as they are, driving real server-memory processes through the
 * built CLI: `list` (all servers, and an agent's profile), `call`, `config check` and `config convert`.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-app-configs-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const memory = COMMANDS.memory.command;
const memoryFile = (name: string) => join(dir, `${name}.jsonl`);

const SHAPES = {
  "mcp-client-servers": {
    file: "agent.yaml",
    text: () =>
      [
        "mcp:",
        "  client:",
        "    servers:",
        "      - name: notes",
        "        transport: stdio",
        `        command: [${JSON.stringify(memory)}]`,
        `        env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile("client-notes"))} }`,
        "      - name: facts",
        `        command: [${JSON.stringify(memory)}]`,
        `        env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile("client-facts"))} }`,
        "    agent_permissions:",
        "      writer: { allowed_servers: [notes] }",
        "",
      ].join("\n"),
    shape: "mcp.client.servers list",
  },
  "server-map": {
    file: "servers.json",
    text: () =>
      JSON.stringify({
        notes: {
          name: "Notes",
          command: memory,
          args: [],
          env: { MEMORY_FILE_PATH: memoryFile("map-notes") },
        },
        facts: {
          name: "Facts",
          command: memory,
          env: { MEMORY_FILE_PATH: memoryFile("map-facts") },
          enabled: true,
        },
      }),
    shape: "map of servers by id",
  },
  mcp_servers: {
    file: "settings.yaml",
    text: () =>
      [
        "agent_config:",
        "  agent_settings:",
        "    writer:",
        "      mcp_servers:",
        "        notes:",
        "          type: stdio",
        `          command: ${JSON.stringify(memory)}`,
        `          env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile("agents-notes"))} }`,
        "    reader:",
        "      mcp_servers:",
        "        facts:",
        `          command: ${JSON.stringify(memory)}`,
        `          env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile("agents-facts"))} }`,
        "",
      ].join("\n"),
    shape: "mcp_servers map",
  },
} as const;

interface Listed {
  servers: Array<{ name: string; state: string; tools: Array<{ name: string }> }>;
}

describe.each(Object.entries(SHAPES))("a %s file", (format, shape) => {
  let config: string;
  beforeAll(async () => {
    config = join(dir, `${format}-${shape.file}`);
    await writeFile(config, shape.text());
  });

  it("lists both real servers and their tools with mcplex list", async () => {
    const { code, stdout, stderr } = await runCli(["list", "--config", config, "--json"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const listed = JSON.parse(stdout) as Listed;
    expect(listed.servers.map((s) => [s.name, s.state])).toEqual([
      ["notes", "ready"],
      ["facts", "ready"],
    ]);
    const names = listed.servers.flatMap((s) => s.tools.map((t) => t.name));
    expect(names).toEqual(expect.arrayContaining(["notes__read_graph", "facts__create_entities"]));
  });

  it("calls a tool of a server it configures", async () => {
    const entity = { name: `Lovelace-${format}`, entityType: "person", observations: ["wrote programs"] };
    const { code, stdout } = await runCli([
      "call",
      "notes__create_entities",
      JSON.stringify({ entities: [entity] }),
      "--config",
      config,
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain(`Lovelace-${format}`);
  });

  it("names the shape it read in config check, with the agents' profiles", async () => {
    const { code, stdout } = await runCli(["config", "check", "--config", config]);
    expect(code).toBe(0);
    expect(stdout).toContain(`(${format}): 2 servers`);
    expect(stdout).toContain(`shape: ${shape.shape}`);
    if (format !== "server-map") expect(stdout).toContain("profile writer: notes");
  });

  it("converts to an mcplex.yaml that loads to the same servers and profiles", async () => {
    const { code, stdout, stderr } = await runCli(["config", "convert", config]);
    expect(code).toBe(0);
    expect(stderr).toContain(`converted ${config}`);
    const original = await loadConfig({ config, env: {} });
    const converted = parseConfig(stdout, { source: join(dir, "mcplex.yaml"), env: {} });
    expect(converted.servers).toEqual(original.servers);
    expect(converted.profiles).toEqual(original.profiles);
  });
});

describe("a profile from an application's agent permissions", () => {
  it("shows the agent only its allowed servers' tools", async () => {
    const config = join(dir, "profile-agent.yaml");
    await writeFile(config, SHAPES["mcp-client-servers"].text());
    const { code, stdout } = await runCli(["list", "--config", config, "--profile", "writer", "--json"]);
    expect(code).toBe(0);
    const listed = JSON.parse(stdout) as Listed;
    const names = listed.servers.flatMap((s) => s.tools.map((t) => t.name));
    expect(names).toContain("notes__read_graph");
    expect(names.filter((n) => n.startsWith("facts__"))).toEqual([]);
  });
});

describe("config errors of an application's file through the CLI", () => {
  it("prints the exact path of an unknown key and exits 2", async () => {
    const config = join(dir, "typo.yaml");
    await writeFile(
      config,
      "mcp:\n  client:\n    servers:\n      - { name: a, command: [x] }\n      - { name: b, comand: [y] }\n",
    );
    const { code, stderr } = await runCli(["config", "check", "--config", config]);
    expect(code).toBe(2);
    expect(stderr).toContain('mcp.client.servers[1].comand: unknown key "comand"; did you mean "command"?');
  });

  it("converts nothing from a file that does not load, or does not exist", async () => {
    const config = join(dir, "broken.json");
    await writeFile(config, JSON.stringify({ a: { command: "x", enabled: "sometimes" } }));
    const broken = await runCli(["config", "convert", config]);
    expect(broken.code).toBe(2);
    expect(broken.stdout).toBe("");
    expect(broken.stderr).toContain('a.enabled: must be true or false, not "sometimes"');
    const missing = await runCli(["config", "convert", join(dir, "no-such.yaml")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read the config file");
    expect((await runCli(["config", "convert"])).stderr).toContain("config convert takes one file");
  });
});

describe("AIWhisperer's seed config through the CLI", () => {
  // Verbatim from DeanoC/AIWhisperer (config/mcp_client.yaml); see test/config/aiwhisperer-config.test.ts.
  const seed = fileURLToPath(new URL("../fixtures/config/aiwhisperer-mcp_client.yaml", import.meta.url));

  it("config check accepts it and says its block is disabled, so that no server is used", async () => {
    const { code, stdout, stderr } = await runCli(["config", "check", "--config", seed]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "(mcp-client-servers): 0 servers (and 3 turned off by mcp.client.enabled: false)",
    );
    expect(stdout).toContain(
      "warning: mcp.client.enabled: is false: the block is disabled, so its servers (filesystem, github, websearch) are checked but not used",
    );
  });

  it("list explains why it lists nothing", async () => {
    const { code, stdout } = await runCli(["list", "--config", seed]);
    expect(code).toBe(0);
    expect(stdout).toContain("note: mcp.client.enabled is false: the block is disabled");
  });
});
