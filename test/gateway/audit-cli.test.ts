import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/interceptors/audit-log.js";
import { CLI, runCli } from "../support/cli.js";
import { COMMANDS, connectHttp, serveHttp, yamlConfig } from "../support/gateway.js";
import { modulesLoaded } from "../support/modules-loaded.js";
import { until } from "../support/wait.js";

// `mcplex serve --audit FILE|-` as a user runs it: the audit lines on the process's stderr (`-`)
// beside its own messages, or in the file given over the config's `audit.to`; a file that cannot
// be opened stops the start with the path and the reason.

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-audit-cli-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(
    config,
    yamlConfig({ fx: COMMANDS.fixture }, "audit:\n  to: ./from-config.log\n  content: true\n"),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The audit lines among what a process wrote to stderr (its other lines are for people). */
function auditLines(stderr: string): AuditRecord[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith('{"time":'))
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe("mcplex serve --audit", () => {
  it("- writes the audit trail to stderr of mcplex serve --http, one JSON line per call", async () => {
    const server = await serveHttp(["--config", config, "--audit", "-"]);
    try {
      const client = await connectHttp(server.url, { name: "cli-http" });
      try {
        await client.callTool({ name: "fx__echo", arguments: { message: "to stderr" } });
      } finally {
        await client.close();
      }
      await until(() => auditLines(server.stderr()).length > 0, 15_000, "an audit line on stderr");
      expect(auditLines(server.stderr())[0]).toMatchObject({
        subject: "127.0.0.1",
        via: "anonymous",
        client: "cli-http",
        front: "http",
        method: "tools/call",
        target: "fx__echo",
        server: "fx",
        outcome: "ok",
        // The config's block still applies: only `to` is the flag's.
        arguments: { message: "to stderr" },
      });
    } finally {
      await server.stop();
    }
    expect(existsSync(join(dir, "from-config.log"))).toBe(false);
  });

  it("- keeps stdout for the protocol on mcplex serve --stdio, and names the stdio client", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "serve", "--stdio", "--config", config, "--audit", "-"],
      stderr: "pipe",
      env: getDefaultEnvironment(),
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const client = new Client({ name: "cli-stdio", version: "1.0.0" });
    await client.connect(transport);
    try {
      await client.callTool({ name: "fx__echo", arguments: { message: "over stdio" } });
      await until(() => auditLines(stderr).length > 0, 15_000, "an audit line on stderr");
    } finally {
      await client.close();
    }
    expect(auditLines(stderr)[0]).toMatchObject({
      subject: "stdio",
      via: "none",
      client: "cli-stdio",
      front: "stdio",
      method: "tools/call",
      outcome: "ok",
    });
  });

  it("FILE writes to that file (relative to the working directory) instead of audit.to", async () => {
    const server = await serveHttp(["--config", config, "--audit", "flag.log"], { cwd: dir });
    try {
      const client = await connectHttp(server.url, { name: "cli-file" });
      try {
        await client.callTool({ name: "fx__echo", arguments: { message: "to a file" } });
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
    const lines = (await readFile(join(dir, "flag.log"), "utf8")).trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ client: "cli-file", arguments: { message: "to a file" } });
    expect(auditLines(server.stderr())).toEqual([]);
    expect(existsSync(join(dir, "from-config.log"))).toBe(false);
  });

  it("stops the start when the file cannot be opened, naming the path and the reason", async () => {
    const missing = join(dir, "no-such-dir", "audit.log");
    const result = await runCli(["serve", "--http", "--port", "0", "--config", config, "--audit", missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `cannot open the audit file ${missing}: ENOENT: no such file or directory`,
    );
    expect(result.stderr).toContain("create its directory and let mcplex write there");
  });
});

// Off by default, and then free: the audit layer is not composed, its code not even loaded.
describe("the audit trail off", () => {
  it("loads no audit module unless the config has an audit: block", async () => {
    const off = join(dir, "off.yaml");
    await writeFile(off, yamlConfig({ fx: COMMANDS.fixture }));
    const audit = (modules: string[]) =>
      modules.filter((m) => /audit-log|open-audit-sink|rotating-file/.test(m));
    expect(audit(await modulesLoaded(off))).toEqual([]);
    // The same session with a block does load it: the check above can fail.
    const on = join(dir, "on.yaml");
    await writeFile(on, yamlConfig({ fx: COMMANDS.fixture }, "audit:\n  to: stderr\n"));
    expect(audit(await modulesLoaded(on)).length).toBeGreaterThan(0);
  });
});
