import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { searchToolsTool } from "../../src/catalog/search-tools-tool.js";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { viewResolver } from "../../src/catalog-modes/view-resolver.js";
import type { CallRequest, Interceptor } from "../../src/hub/call-pipeline.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { CLI } from "../support/cli.js";
import { configOf, EVERYTHING, fixture, MEMORY, stdio } from "../support/config.js";
import { type InProcessGateway, resultText, startGateway } from "../support/gateway.js";

// Search mode shows a client three meta-tools instead of the catalog; what they find and call is
// the caller's own view of the catalog, and the calls they make go through the same layers as
// direct calls. Real servers: the fixture, server-everything and server-memory.

type Front = "http-2025" | "http-2026" | "ws-2025";

const TOKENS = {
  plain: "plain-token-0123456789",
  searcher: "searcher-token-0123456",
  narrow: "narrow-token-012345678",
  coder: "coder-token-0123456789",
};

let gw: InProcessGateway;
let dir: string;
const seen: CallRequest[] = [];
const audit: Interceptor = (next) => async (request) => {
  seen.push(request);
  return next(request);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcplex-modes-"));
  const config = configOf(
    [
      fixture("fx"),
      stdio("everything", EVERYTHING, ["stdio"]),
      stdio("memory", MEMORY, [], { env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } }),
    ],
    {
      profiles: {
        searching: { tools: {}, mode: "search", pin: ["fx__echo"] },
        narrow: { servers: ["memory"], tools: {}, mode: "search" },
      },
      tokens: [
        { token: TOKENS.plain },
        { token: TOKENS.searcher, profile: "searching" },
        { token: TOKENS.narrow, profile: "narrow" },
        { token: TOKENS.coder, profile: "searching", mode: "code" },
      ],
    },
  );
  gw = await startGateway(
    config,
    {},
    {
      interceptors: [audit],
      views: viewResolver({ default: { mode: "all" }, profiles: config.profiles }, viewEngines()),
    },
  );
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(front: Front, token: string): Promise<Client> {
  const client = new Client(
    { name: "modes-test", version: "1.0.0" },
    { versionNegotiation: { mode: front === "http-2026" ? "auto" : "legacy" } },
  );
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(
    front === "ws-2025"
      ? new WebSocketClientTransport({ url: gw.wsUrl, headers })
      : new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers } }),
  );
  return client;
}

describe.each<Front>(["http-2025", "http-2026", "ws-2025"])("search mode over %s", (front) => {
  it("lists the meta-tools and the pinned tools instead of the catalog", async () => {
    const client = await connect(front, TOKENS.searcher);
    try {
      const listed = (await client.listTools()).tools;
      const names = listed.map((t) => t.name);
      expect(names).toEqual(["fx__echo", "search_tools", "describe_tools", "call_tool"]);
      // The one definition, the same the agent loop offers in its search mode.
      expect(listed.find((t) => t.name === "search_tools")).toEqual(searchToolsTool);
      const everything = await connect(front, TOKENS.plain);
      const all = (await everything.listTools()).tools.map((t) => t.name);
      await everything.close();
      expect(all.length).toBeGreaterThan(20);
      expect(all).not.toContain("search_tools");
    } finally {
      await client.close();
    }
  });

  it("finds, describes and calls a tool, and the call goes through the pipeline as a direct one", async () => {
    const client = await connect(front, TOKENS.searcher);
    try {
      const found = resultText(
        await client.callTool({ name: "search_tools", arguments: { query: "add two numbers together" } }),
      );
      expect(found).toContain("everything__get-sum");
      const described = JSON.parse(
        resultText(
          await client.callTool({ name: "describe_tools", arguments: { names: ["everything__get-sum"] } }),
        ),
      ) as Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }>;
      expect(described[0]?.name).toBe("everything__get-sum");
      expect(Object.keys(described[0]!.inputSchema.properties).sort()).toEqual(["a", "b"]);
      seen.length = 0;
      const viaMeta = await client.callTool({
        name: "call_tool",
        arguments: { name: "everything__get-sum", arguments: { a: 2, b: 40 } },
      });
      const direct = await client.callTool({ name: "everything__get-sum", arguments: { a: 2, b: 40 } });
      expect(viaMeta.content).toEqual(direct.content);
      expect(resultText(viaMeta)).toContain("42");
      const calls = seen.filter((r) => r.method === "tools/call");
      expect(calls.map((r) => r.target)).toMatchObject([
        { kind: "tool", name: "call_tool" },
        {
          kind: "tool",
          name: "everything__get-sum",
          server: "everything",
          tool: { originalName: "get-sum" },
        },
        { kind: "tool", name: "everything__get-sum", server: "everything" },
      ]);
      expect(calls[1]?.context.profile).toBe("searching");
    } finally {
      await client.close();
    }
  });
});

describe("search mode", () => {
  it("answers unknown names and bad arguments with tool errors the model can act on", async () => {
    const client = await connect("http-2025", TOKENS.searcher);
    try {
      const unknown = await client.callTool({ name: "call_tool", arguments: { name: "nope__nothing" } });
      expect(unknown.isError).toBe(true);
      expect(resultText(unknown)).toMatch(/No tool named nope__nothing.*search_tools/);
      const noQuery = await client.callTool({ name: "search_tools", arguments: {} });
      expect(noQuery.isError).toBe(true);
      expect(resultText(noQuery)).toContain("needs `query`");
      const half = await client.callTool({
        name: "describe_tools",
        arguments: { names: ["fx__echo", "fx__missing"] },
      });
      expect(half.isError).toBeFalsy();
      expect(resultText(half)).toContain("No tool named fx__missing");
      const recursive = await client.callTool({
        name: "call_tool",
        arguments: { name: "call_tool", arguments: { name: "fx__echo" } },
      });
      expect(recursive.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("keeps to the caller's profile: it finds and calls nothing outside it", async () => {
    const client = await connect("http-2026", TOKENS.narrow);
    try {
      const found = resultText(
        await client.callTool({
          name: "search_tools",
          arguments: { query: "echo a message back", limit: 50 },
        }),
      );
      expect(found).not.toMatch(/everything__|fx__/);
      const outside = await client.callTool({
        name: "call_tool",
        arguments: { name: "everything__echo", arguments: { message: "hi" } },
      });
      expect(outside.isError).toBe(true);
      const inside = resultText(
        await client.callTool({ name: "search_tools", arguments: { query: "knowledge graph entities" } }),
      );
      expect(inside).toContain("memory__");
    } finally {
      await client.close();
    }
  });

  it("relays the client's progress token through call_tool", async () => {
    const client = await connect("http-2025", TOKENS.searcher);
    try {
      const progress: number[] = [];
      const result = await client.callTool(
        { name: "call_tool", arguments: { name: "fx__slow", arguments: { ms: 300, step: 50 } } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(result.isError).toBeFalsy();
      expect(progress.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("lets a token's mode win over its profile's", async () => {
    const client = await connect("http-2025", TOKENS.coder);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(["fx__echo", "search_tools", "describe_tools", "run_code"]);
    } finally {
      await client.close();
    }
  });
});

describe("catalog modes on the other fronts", () => {
  it("serve --stdio --tools search: a spawned gateway lists the meta-tools and calls through them", async () => {
    const file = join(dir, "stdio.yaml");
    writeFileSync(
      file,
      `servers:\n  everything:\n    command: ${JSON.stringify(resolve(EVERYTHING))}\n    args: [stdio]\n`,
    );
    const client = new Client({ name: "modes-stdio", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        // The list waits for the server (a loaded machine takes more than the default 1 s).
        args: [CLI, "serve", "--stdio", "--tools", "search", "--ready-wait", "1m", "--config", file],
        stderr: "ignore",
        env: { ...getDefaultEnvironment(), MCPLEX_CHECK_SIGNALS: process.env.MCPLEX_CHECK_SIGNALS ?? "" },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        "search_tools",
        "describe_tools",
        "call_tool",
      ]);
      const result = await client.callTool({
        name: "call_tool",
        arguments: { name: "everything__get-sum", arguments: { a: 20, b: 22 } },
      });
      expect(resultText(result)).toContain("42");
    } finally {
      await client.close();
    }
  });

  it("HTTP+SSE (2024-11-05) clients get the view of their token too", async () => {
    const client = new Client({ name: "modes-sse", version: "1.0.0" });
    await client.connect(
      new SSEClientTransport(new URL(gw.url.replace(/\/mcp$/, "/sse")), {
        requestInit: { headers: { authorization: `Bearer ${TOKENS.coder}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
        "fx__echo",
        "search_tools",
        "describe_tools",
        "run_code",
      ]);
    } finally {
      await client.close();
    }
  });
});
