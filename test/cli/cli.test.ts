import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";

const TSX = resolve("node_modules/.bin/tsx");
const FIXTURE = resolve("test/fixtures/servers/fixture-server.ts");
const EVERYTHING = resolve("node_modules/.bin/mcp-server-everything");

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-cli-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  fx:",
      `    command: ${TSX}`,
      `    args: [${FIXTURE}]`,
      "  broken:",
      "    command: mcplex-no-such-command",
      "",
    ].join("\n"),
  );
  return () => rm(dir, { recursive: true, force: true });
});

describe("mcplex list", () => {
  it("shows a server called with each user's own credentials as per-user, not idle", async () => {
    const file = join(dir, "per-user.yaml");
    await writeFile(
      file,
      [
        "servers:",
        "  mine:",
        "    command: node",
        "    env: { KEY: '${user:KEY}' }",
        "    credentials: per-user",
        "",
      ].join("\n"),
    );
    const { code, stdout } = await runCli(["list", "--config", file]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^mine {2}per-user {2}stdio/m);
    expect(stdout).toContain("called with each signed-in user's own credentials");
  });

  it("prints one JSON object with servers, state, protocol, error and tools", async () => {
    const { code, stdout } = await runCli(["list", "--config", config, "--json"]);
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout) as { servers: Array<Record<string, unknown>> };
    expect(parsed.servers.map((s) => s.name)).toEqual(["fx", "broken"]);
    const [fx, broken] = parsed.servers as Array<{
      name: string;
      state: string;
      transport: string;
      protocolVersion: string | null;
      error: string | null;
      tools: Array<{ name: string; originalName: string; description: string | null }>;
    }>;
    expect(Object.keys(fx!).sort()).toEqual([
      "error",
      "name",
      "protocolVersion",
      "state",
      "tools",
      "transport",
    ]);
    expect(fx).toMatchObject({
      state: "ready",
      transport: "stdio",
      protocolVersion: "2026-07-28",
      error: null,
    });
    expect(fx!.tools).toContainEqual({
      name: "fx__echo",
      originalName: "echo",
      description: "Echoes its message",
    });
    expect(broken).toMatchObject({ state: "failed", protocolVersion: null, tools: [] });
    expect(broken!.error).toMatch(/mcplex-no-such-command/);
  });

  it("works with no config at all: a read-only workspace on the current directory", async () => {
    const empty = await mkdtemp(join(tmpdir(), "mcplex-empty-"));
    await writeFile(join(empty, "hello.txt"), "hello from the workspace\n");
    try {
      const list = await runCli(["list", "--json"], { cwd: empty });
      expect(list.code).toBe(0);
      const tools = (
        JSON.parse(list.stdout) as { servers: Array<{ name: string; tools: Array<{ name: string }> }> }
      ).servers[0]!;
      expect(tools.name).toBe("workspace");
      expect(tools.tools.map((t) => t.name)).toContain("workspace__read_file");
      expect(tools.tools.map((t) => t.name)).not.toContain("workspace__write_file");
      const read = await runCli(["call", "workspace__read_file", '{"path":"hello.txt"}'], { cwd: empty });
      expect(read.code).toBe(0);
      expect(read.stdout).toContain("hello from the workspace");
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe("mcplex call", () => {
  it("prints text content and exits 0", async () => {
    const { code, stdout } = await runCli(["call", "fx__echo", '{"message":"hi"}', "--config", config]);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("echo: hi");
  });

  it("prints the raw result with --json", async () => {
    const { code, stdout } = await runCli([
      "call",
      "fx__echo",
      '{"message":"raw"}',
      "--config",
      config,
      "--json",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ content: [{ type: "text", text: "echo: raw" }] });
  });

  it("exits 1 when the tool returns isError", async () => {
    const { code, stdout } = await runCli(["call", "fx__fail", "--config", config]);
    expect(code).toBe(1);
    expect(stdout).toContain("this tool failed on purpose");
  });

  it("exits 2 for bad JSON arguments, unknown tools and bad configs", async () => {
    const badJson = await runCli(["call", "fx__echo", "{message:", "--config", config]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/not valid JSON/);
    const unknown = await runCli(["call", "fx__nope", "--config", config]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown tool "fx__nope"/);
    const missingConfig = await runCli(["call", "fx__echo", "--config", join(dir, "nope.yaml")]);
    expect(missingConfig.code).toBe(2);
    expect(missingConfig.stderr).toMatch(/nope\.yaml does not exist/);
  });

  it("exits 3 when the tool's server is unavailable", async () => {
    const { code, stderr } = await runCli(["call", "broken__anything", "--config", config]);
    expect(code).toBe(3);
    expect(stderr).toMatch(/server "broken" is failed/);
  });
});

describe("mcplex config check", () => {
  it("names the exact path of an invalid field and how to fix it", async () => {
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "servers:\n  github:\n    comand: gh\n");
    const { code, stderr } = await runCli(["config", "check", "--config", bad]);
    expect(code).toBe(2);
    expect(stderr).toContain("servers.github");
    expect(stderr).toMatch(/comand/);
  });

  it("reports a missing variable with its path", async () => {
    const bad = join(dir, "vars.yaml");
    await writeFile(
      bad,
      "servers:\n  github:\n    command: gh\n    env:\n      GITHUB_TOKEN: ${MCPLEX_TEST_UNSET_VAR}\n",
    );
    const { code, stderr } = await runCli(["config", "check", "--config", bad]);
    expect(code).toBe(2);
    expect(stderr).toContain("servers.github.env.GITHUB_TOKEN");
    expect(stderr).toContain("MCPLEX_TEST_UNSET_VAR");
  });

  it("validates a good config without connecting", async () => {
    const { code, stdout } = await runCli(["config", "check", "--config", config]);
    expect(code).toBe(0);
    expect(stdout).toContain("fx");
  });
});

describe("mcplex secrets", () => {
  it("stores secrets encrypted, resolves ${secret:NAME} for servers, and never prints them", async () => {
    const home = await mkdtemp(join(tmpdir(), "mcplex-home-"));
    const env = { MCPLEX_HOME: home, MCPLEX_SECRET_KEY: "a".repeat(64) };
    try {
      const value = "s3cr3t-value-for-test";
      expect((await runCli(["secrets", "set", "API_TOKEN"], { env, input: `${value}\n` })).code).toBe(0);
      const stored = await readFile(join(home, "secrets.enc"), "utf8");
      expect(stored).not.toContain(value);
      expect((await runCli(["secrets", "list"], { env })).stdout.trim()).toBe("API_TOKEN");

      const withSecret = join(dir, "secret.yaml");
      await writeFile(
        withSecret,
        `servers:\n  everything:\n    command: ${EVERYTHING}\n    args: [stdio]\n    env:\n      API_TOKEN: \${secret:API_TOKEN}\n`,
      );
      const call = await runCli(["call", "everything__get-env", "--config", withSecret], { env });
      expect(call.code).toBe(0);
      expect(call.stdout).toContain(value); // the server got it...
      const check = await runCli(["config", "check", "--config", withSecret], { env });
      expect(check.stdout + check.stderr).not.toContain(value); // ...and mcplex never shows it

      const wrongKey = await runCli(["call", "everything__get-env", "--config", withSecret], {
        env: { ...env, MCPLEX_SECRET_KEY: "b".repeat(64) },
      });
      expect(wrongKey.code).toBe(2);
      expect(wrongKey.stderr).toMatch(/key/i);
      expect(wrongKey.stderr).not.toContain(value);

      expect((await runCli(["secrets", "rm", "API_TOKEN"], { env })).code).toBe(0);
      expect((await runCli(["secrets", "list"], { env })).stdout.trim()).toBe("");
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("mcplex usage", () => {
  it("explains unknown commands with exit code 2", async () => {
    const { code, stderr } = await runCli(["frobnicate"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command "frobnicate"/);
  });

  it("explains an unknown option of a command with exit code 2, and no stack trace", async () => {
    const { code, stderr } = await runCli(["list", "--bogus"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^mcplex: list: Unknown option '--bogus'/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("prints the usage for --help after a command", async () => {
    const { code, stdout } = await runCli(["serve", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/mcplex serve \[--http \| --ws \| --stdio\]/);
  });

  it("names a workspace root that does not exist, without a stack trace", async () => {
    const { code, stderr } = await runCli(["workspace", "--root", "/nonexistent/mcplex-root"], { input: "" });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(
      /Workspace root \/nonexistent\/mcplex-root does not exist or cannot be read \(ENOENT\)/,
    );
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});
