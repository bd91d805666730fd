import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { rawHttp } from "../support/gateway.js";

// `mcplex serve --stdio --dashboard-port P`: the client speaks MCP on stdio, a person watches
// the same gateway's calls in the dashboard on its own port.

describe("serve --stdio with --dashboard-port", { timeout: 90_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-dash-stdio-"));
    await writeFile(join(dir, "notes.txt"), "hello from the workspace\n");
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("serves the dashboard of the stdio gateway, with its calls, and no MCP on that port", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "serve", "--stdio", "--dashboard-port", "0"],
      cwd: dir,
      stderr: "pipe",
      env: { ...getDefaultEnvironment(), MCPLEX_CHECK_SIGNALS: process.env.MCPLEX_CHECK_SIGNALS ?? "" },
    });
    let stderr = "";
    const announced = new Promise<string>((resolve) => {
      transport.stderr!.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
        const url = /dashboard at (http:\/\/127\.0\.0\.1:\d+\/dashboard)/.exec(stderr)?.[1];
        if (url !== undefined) resolve(url);
      });
    });
    const client = new Client({ name: "stdio-dashboard-test", version: "1" });
    await client.connect(transport);
    try {
      const dashboard = await announced;
      const result = await client.callTool({
        name: "workspace__read_file",
        arguments: { path: "notes.txt" },
      });
      expect(JSON.stringify(result.content)).toContain("hello from the workspace");

      const state = (await rawHttp(`${dashboard}/state`, { method: "GET" })).json as {
        servers: Array<{ name: string; state: string }>;
        calls: { recent: Array<{ target: string; server: string; outcome: string }> };
        gateway: { mcpHere: boolean };
      };
      // The page offers no tools, resources or prompts views: they call /mcp, not served here.
      expect(state.gateway.mcpHere).toBe(false);
      expect(state.servers).toContainEqual(expect.objectContaining({ name: "workspace", state: "ready" }));
      expect(state.calls.recent).toContainEqual(
        expect.objectContaining({ target: "workspace__read_file", server: "workspace", outcome: "ok" }),
      );
      const origin = dashboard.replace(/\/dashboard$/, "");
      const mcp = await rawHttp(`${origin}/mcp`, {
        method: "POST",
        body: { jsonrpc: "2.0", id: 1, method: "ping" },
      });
      expect(mcp.status).toBe(404);
      expect(mcp.json).toEqual({
        error: "MCP is not served on this port: this gateway serves its client on stdio",
      });
    } finally {
      await client.close();
    }
  });

  it("is refused without --stdio, and with a port out of range", async () => {
    const http = await runCli(["serve", "--http", "--dashboard-port", "8500"], { cwd: dir });
    expect(http.code).toBe(2);
    expect(http.stderr).toContain(
      "--dashboard-port is for --stdio; over HTTP the dashboard is at /dashboard",
    );
    const range = await runCli(["serve", "--stdio", "--dashboard-port", "70000"], { cwd: dir });
    expect(range.code).toBe(2);
    expect(range.stderr).toContain("--dashboard-port must be 0-65535, not 70000");
  });
});
