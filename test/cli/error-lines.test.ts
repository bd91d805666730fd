import { once } from "node:events";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../support/cli.js";

const RPC_ERROR_SERVER = resolve("test/fixtures/servers/rpc-error-server.mjs");

let dir: string;
let config: string;
let badConfig: string;
let busy: Server;
let busyPort: number;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-errors-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    [
      "servers:",
      "  api:",
      `    command: ${process.execPath}`,
      `    args: [${RPC_ERROR_SERVER}]`,
      "  remote:",
      // Port 9 (discard) on loopback: nothing listens there, the connection is refused.
      "    url: http://127.0.0.1:9/mcp",
      "    oauth: true",
      "",
    ].join("\n"),
  );
  badConfig = join(dir, "bad.yaml");
  await writeFile(badConfig, "servers:\n  a:\n    command: x\n    timeout: soon\n");
  busy = createServer().listen(0, "127.0.0.1");
  await once(busy, "listening");
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  busy.close();
  await rm(dir, { recursive: true, force: true });
});

/** One `mcplex:` line holding every part, at most one `hint:` line after it, no stack frame. */
function expectOneLine(out: CliResult, parts: string[]): void {
  expect(out.stderr).not.toMatch(/^\s+at /m);
  const lines = out.stderr.trimEnd().split("\n");
  expect(lines.length, out.stderr).toBeLessThanOrEqual(2);
  expect(lines[0]).toMatch(/^mcplex: /);
  if (lines[1] !== undefined) expect(lines[1]).toMatch(/^ {2}hint: /);
  for (const part of parts) expect(lines[0]).toContain(part);
}

describe("every command prints one line per failure, never a stack trace", { timeout: 60_000 }, () => {
  it("call: a JSON-RPC error from the server names server, tool, code and message; exit 1", async () => {
    const out = await runCli(["call", "api__lookup", "--config", config]);
    expectOneLine(out, ['"api"', '"lookup"', "-32603", "getaddrinfo ENOTFOUND api.example.invalid"]);
    expect(out.code).toBe(1);
  });

  it("call: a JSON-RPC error quoting a secret of the config prints it as ***", async () => {
    const leaky = join(dir, "leaky.yaml");
    await writeFile(
      leaky,
      `servers:\n  api:\n    command: ${process.execPath}\n    args: [${RPC_ERROR_SERVER}]\n    env: { API_TOKEN: "\${LEAKY_TOKEN}" }\n`,
    );
    const out = await runCli(["call", "api__lookup", "--config", leaky], {
      env: { LEAKY_TOKEN: "sk-live-0123456789abcdef" },
    });
    expectOneLine(out, ['"api"', "-32603", "***"]);
    expect(out.stderr).not.toContain("sk-live-0123456789abcdef");
    expect(out.code).toBe(1);
  });

  it("call: an unreachable server names the server and the tool; exit 3", async () => {
    const out = await runCli(["call", "remote__search", "--config", config], {
      env: { MCPLEX_HOME: join(dir, "home-call") },
    });
    expectOneLine(out, ['"remote"', "remote__search", "UPSTREAM_UNAVAILABLE"]);
    expect(out.code).toBe(3);
  });

  it("call: a server that does not answer within --timeout names server and tool; exit 3", async () => {
    const fixture = join(dir, "fixture.yaml");
    await writeFile(
      fixture,
      `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${resolve("test/fixtures/servers/fixture-server.ts")}]\n`,
    );
    const out = await runCli(["call", "fx__slow", '{"ms":30000}', "--timeout", "300", "--config", fixture]);
    expectOneLine(out, ['server "fx"', "fx__slow", "timed out", "REQUEST_TIMEOUT"]);
    expect(out.code).toBe(3);
  });

  it("call: an unknown tool lists the nearby names; exit 2", async () => {
    const out = await runCli(["call", "api__lokup", "--config", config]);
    expectOneLine(out, ["api__lokup", "api__lookup", "TOOL_NOT_FOUND"]);
    expect(out.code).toBe(2);
  });

  it("call, list, config check, serve: a bad config names the field; exit 2", async () => {
    for (const args of [["call", "a__x"], ["list"], ["config", "check"], ["serve", "--stdio"]]) {
      const out = await runCli([...args, "--config", badConfig]);
      expectOneLine(out, ["servers.a.timeout", "CONFIG_INVALID"]);
      expect(out.code, args.join(" ")).toBe(2);
    }
  });

  it("config check, doctor: a config with two problems lists each once; exit 2", async () => {
    const twice = join(dir, "two-problems.yaml");
    await writeFile(twice, "servers:\n  a:\n    comand: x\n");
    for (const args of [["config", "check"], ["doctor"]]) {
      const out = await runCli([...args, "--config", twice]);
      const text = out.stdout + out.stderr;
      expect(text).not.toMatch(/^\s+at /m);
      expect(text.split('unknown key "comand"').length - 1, text).toBe(1);
      expect(text.split('needs either "command"').length - 1, text).toBe(1);
      expect(out.code, args.join(" ")).toBe(2);
    }
  });

  it("serve: a port in use names the port and another to take; exit 2", async () => {
    const out = await runCli(["serve", "--port", String(busyPort), "--config", config]);
    expectOneLine(out, [`127.0.0.1:${busyPort}`, "already in use"]);
    expect(out.stderr).toContain(`--port ${busyPort + 1}`);
    expect(out.code).toBe(2);
  });

  it("secrets: a damaged store names the file and what to do; exit 2", async () => {
    const home = join(dir, "damaged");
    await mkdir(home, { recursive: true });
    await writeFile(join(home, "secrets.enc"), "not a store\n");
    const out = await runCli(["secrets", "list"], { env: { MCPLEX_HOME: home } });
    expectOneLine(out, [join(home, "secrets.enc"), "SECRET_STORE_INVALID"]);
    expect(out.code).toBe(2);
  });

  it("auth login: an unreachable server names the server and its URL; exit 3", async () => {
    const out = await runCli(["auth", "login", "remote", "--no-browser", "--config", config], {
      env: { MCPLEX_HOME: join(dir, "home-auth") },
    });
    expectOneLine(out, ['"remote"', "http://127.0.0.1:9/mcp"]);
    expect(out.code).toBe(3);
  });

  it("workspace: a root that does not exist is a usage error; exit 2", async () => {
    const out = await runCli(["workspace", "--root", join(dir, "no-such-dir")]);
    expectOneLine(out, [join(dir, "no-such-dir"), "does not exist"]);
    expect(out.code).toBe(2);
  });

  it("chat: no LLM configured names the setting, on one line; exit 2", async () => {
    const out = await runCli(["chat", "-p", "hi", "--config", config], {
      env: { MCPLEX_LLM_BASE_URL: "", MCPLEX_LLM_MODEL: "" },
    });
    expectOneLine(out, ["llm.baseUrl"]);
    expect(out.code).toBe(2);
  });

  it("chat: an LLM that cannot be reached exits 3, as documented", async () => {
    const out = await runCli(
      ["chat", "-p", "hi", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--config", config],
      { env: { MCPLEX_LLM_BASE_URL: "", MCPLEX_LLM_MODEL: "" } },
    );
    expect(out.stderr).not.toMatch(/^\s+at /m);
    expect(out.code).toBe(3);
  });

  it("prints the stack trace only under MCPLEX_DEBUG=1 or --debug", async () => {
    for (const out of [
      await runCli(["call", "api__lookup", "--config", config], { env: { MCPLEX_DEBUG: "1" } }),
      await runCli(["call", "api__lookup", "--config", config, "--debug"]),
    ]) {
      expect(out.stderr).toMatch(/^\s+at /m);
      expect(out.code).toBe(1);
    }
  });
});
