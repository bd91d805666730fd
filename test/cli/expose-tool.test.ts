import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { CLI } from "../support/cli.js";
import { COMMANDS, resultText, serveHttp } from "../support/gateway.js";

/**
 * `--expose-tool` and `--transport` as an application starts mcplex for the server side of its
 * config: `serve --config F --transport stdio --expose-tool NAME`, and `mcplex workspace` over
 * stdio and WebSocket, each used by an independent SDK client.
 */
let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-expose-"));
  await writeFile(join(dir, "hello.txt"), "hello from the workspace\n");
  config = join(dir, "agent.yaml");
  await writeFile(
    config,
    [
      "mcp:",
      "  client:",
      "    servers:",
      "      - name: memory",
      "        transport: stdio",
      `        command: [${JSON.stringify(COMMANDS.memory.command)}]`,
      `        env: { MEMORY_FILE_PATH: ${JSON.stringify(join(dir, "memory.jsonl"))} }`,
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function connect(transport: StdioClientTransport | WebSocketClientTransport): Promise<Client> {
  const client = new Client({ name: "expose-tool-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const cli = (args: string[]) =>
  new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args],
    stderr: "ignore",
    env: getDefaultEnvironment(),
  });

/** Spawns the CLI with stdin held open; resolves with its exit code and stderr. */
function exitOf(args: string[]): {
  child: ChildProcess;
  done: Promise<{ code: number | null; stderr: string }>;
} {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stderr })),
  );
  return { child, done };
}

describe("mcplex serve --transport stdio --expose-tool", () => {
  it("serves only the tools matching the globs, and refuses a call to another", async () => {
    const client = await connect(
      cli([
        "serve",
        "--config",
        config,
        "--transport",
        "stdio",
        // The list waits for the server (a loaded machine takes more than the default 1 s).
        "--ready-wait",
        "1m",
        "--expose-tool",
        "memory__read_graph",
        "--expose-tool",
        "memory__*_nodes",
      ]),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(["memory__open_nodes", "memory__read_graph", "memory__search_nodes"]);
      expect(resultText(await client.callTool({ name: "memory__read_graph", arguments: {} }))).toContain(
        "entities",
      );
      await expect(
        client.callTool({ name: "memory__create_entities", arguments: { entities: [] } }),
      ).rejects.toThrow(/memory__create_entities/);
    } finally {
      await client.close();
    }
  });

  it("exits 2 at start when a glob matches no tool, naming the tools there are", async () => {
    const { child, done } = exitOf([
      "serve",
      "--config",
      config,
      "--transport",
      "stdio",
      "--expose-tool",
      "memory__raed*",
    ]);
    const { code, stderr } = await done;
    child.stdin?.destroy();
    expect(code).toBe(2);
    expect(stderr).toContain('--expose-tool "memory__raed*" matches no tool; the tools are: ');
    expect(stderr).toContain("memory__read_graph");
  });

  it("refuses a transport it does not know, and one contradicting --stdio", async () => {
    const bad = exitOf(["serve", "--config", config, "--transport", "grpc"]);
    expect((await bad.done).stderr).toContain("--transport must be stdio, http or websocket");
    const both = exitOf(["serve", "--config", config, "--transport", "websocket", "--stdio"]);
    const result = await both.done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--transport websocket contradicts --stdio");
  });
});

describe("mcplex serve --transport websocket --expose-tool", () => {
  it("serves only the matching tools to a WebSocket client at /ws", async () => {
    const served = await serveHttp([
      "--config",
      config,
      "--transport",
      "websocket",
      "--no-dashboard",
      "--expose-tool",
      "memory__read_graph",
    ]);
    try {
      expect(served.stderr()).toContain("1 tools");
      const client = await connect(new WebSocketClientTransport({ url: served.wsUrl }));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["memory__read_graph"]);
      } finally {
        await client.close();
      }
    } finally {
      await served.stop();
    }
  });
});

describe("mcplex workspace --expose-tool", () => {
  it("serves only the matching workspace tools over stdio, under their own names", async () => {
    const client = await connect(
      cli(["workspace", "--root", dir, "--expose-tool", "read_file", "--expose-tool", "list_*"]),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(["list_directory", "read_file"]);
      const read = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
      expect(resultText(read)).toContain("hello from the workspace");
    } finally {
      await client.close();
    }
  });

  it("exits 2 when a glob matches none of the workspace tools", async () => {
    const { done } = exitOf(["workspace", "--root", dir, "--expose-tool", "delete_*"]);
    const { code, stderr } = await done;
    expect(code).toBe(2);
    expect(stderr).toMatch(/--expose-tool "delete_\*" matches no tool; the tools are: .*read_file/);
  });
});

describe("mcplex workspace --transport websocket", () => {
  it("is used by a WebSocket MCP client on loopback", async () => {
    const { child, done } = exitOf(["workspace", "--root", dir, "--transport", "websocket", "--port", "0"]);
    try {
      const wsUrl = await new Promise<string>((resolve, reject) => {
        let seen = "";
        child.stderr?.on("data", (chunk: string) => {
          seen += chunk;
          const url = /WebSocket\s+(ws:\/\/127\.0\.0\.1:\d+\/ws)/.exec(seen)?.[1];
          if (url !== undefined) resolve(url);
        });
        void done.then(({ stderr }) => reject(new Error(`workspace exited first:\n${stderr}`)));
      });
      const client = await connect(new WebSocketClientTransport({ url: wsUrl }));
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(["read_file", "list_directory", "search_files"]));
        expect(names).not.toContain("write_file");
        const read = await client.callTool({ name: "read_file", arguments: { path: "hello.txt" } });
        expect(resultText(read)).toContain("hello from the workspace");
      } finally {
        await client.close();
      }
    } finally {
      child.kill("SIGTERM");
      expect((await done).code).toBe(0);
    }
  });

  it("refuses a non-loopback host and --port without websocket", async () => {
    const open = exitOf(["workspace", "--root", dir, "--transport", "websocket", "--host", "0.0.0.0"]);
    const result = await open.done;
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("0.0.0.0");
    const port = exitOf(["workspace", "--root", dir, "--port", "0"]);
    expect((await port.done).stderr).toContain("--port and --host are for --transport websocket");
  });
});
