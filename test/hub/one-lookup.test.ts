import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/run-agent.js";
import { Catalog } from "../../src/catalog/catalog.js";
import { viewEngines } from "../../src/catalog-modes/view-engines.js";
import { viewResolver } from "../../src/catalog-modes/view-resolver.js";
import { callCommand } from "../../src/cli/commands/call.js";
import { serveGatewayStdio } from "../../src/fronts/stdio-front.js";
import { WebSocketClientTransport } from "../../src/upstream/websocket-transport.js";
import { configOf, EVERYTHING, fixture, stdio } from "../support/config.js";
import { type InProcessGateway, resultText, startGateway } from "../support/gateway.js";
import { collect, collectText, startMockLlm, toolMessages } from "../support/mock-llm.js";

// A call's tool is looked up in the catalog once, whoever makes the call and whatever front it
// comes on: the target resolved then travels with the request (`CallRequest.target`) to the
// server. A count, not a time.

const TOOL = "fx__echo";
const PROMPT = "fx__greet";
const TEMPLATE = "demo://resource/dynamic/text/{resourceId}";
const TOKENS = { plain: "plain-token-0123456789", searcher: "search-token-0123456789" };

let gw: InProcessGateway;
let lookups = 0;
let promptLookups = 0;
let templateLookups = 0;
let resourceLookups = 0;
const resolveTool = Catalog.prototype.resolveTool;
const resolvePrompt = Catalog.prototype.resolvePrompt;
const resolveTemplate = Catalog.prototype.resolveResourceTemplate;
const resolveResource = Catalog.prototype.resolveResource;
beforeAll(async () => {
  const config = configOf(
    [
      fixture("fx"),
      stdio("every", EVERYTHING, ["stdio"]),
      stdio("sk", process.execPath, ["test/fixtures/servers/skills-server.mjs", "--origin", "sk"]),
    ],
    {
      profiles: { searching: { tools: {}, mode: "search" } },
      tokens: [{ token: TOKENS.plain }, { token: TOKENS.searcher, profile: "searching" }],
    },
  );
  gw = await startGateway(
    config,
    {},
    { views: viewResolver({ default: { mode: "all" }, profiles: config.profiles }, viewEngines()) },
  );
  Catalog.prototype.resolveTool = function (this: Catalog, name, profile) {
    if (name === TOOL) lookups++;
    return resolveTool.call(this, name, profile);
  };
  Catalog.prototype.resolvePrompt = function (this: Catalog, name, profile) {
    if (name === PROMPT) promptLookups++;
    return resolvePrompt.call(this, name, profile);
  };
  Catalog.prototype.resolveResourceTemplate = function (this: Catalog, uri, profile) {
    if (uri === TEMPLATE) templateLookups++;
    return resolveTemplate.call(this, uri, profile);
  };
  Catalog.prototype.resolveResource = function (this: Catalog, uri, profile) {
    resourceLookups++;
    return resolveResource.call(this, uri, profile);
  };
}, 60_000);
afterAll(async () => {
  Catalog.prototype.resolveTool = resolveTool;
  Catalog.prototype.resolvePrompt = resolvePrompt;
  Catalog.prototype.resolveResourceTemplate = resolveTemplate;
  Catalog.prototype.resolveResource = resolveResource;
  await gw?.stop();
});

/** How many times `call` looked the tool up, once it resolved with `echo: <message>`. */
async function lookupsOf(call: () => Promise<unknown>): Promise<number> {
  lookups = 0;
  expect(resultText(await call())).toBe("echo: once");
  return lookups;
}

const ARGS = { message: "once" };
const headers = (token = TOKENS.plain) => ({ authorization: `Bearer ${token}` });

/** An SDK client on `transport`, closed once `use` is done. */
async function withClient<T>(
  transport: () => Parameters<Client["connect"]>[0],
  mode: "legacy" | "auto",
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const client = new Client({ name: "one-lookup", version: "1" }, { versionNegotiation: { mode } });
  await client.connect(transport());
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe("a call's tool is looked up once", () => {
  it("by hub.callTool, and not at all for a tool its caller already resolved", async () => {
    expect(await lookupsOf(() => gw.hub.callTool(TOOL, ARGS))).toBe(1);
    const tool = gw.hub.catalog.tools().find((t) => t.name === TOOL)!;
    expect(await lookupsOf(() => gw.hub.callTool(tool, ARGS))).toBe(0);
  });

  it.each([
    [
      "a 2026 HTTP request",
      "auto",
      () => new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: headers() } }),
    ],
    [
      "a 2025 HTTP session",
      "legacy",
      () => new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: headers() } }),
    ],
    [
      "a WebSocket session",
      "legacy",
      () => new WebSocketClientTransport({ url: gw.wsUrl, headers: headers() }),
    ],
    [
      "a legacy SSE session",
      "legacy",
      () => new SSEClientTransport(new URL(`${gw.origin}/sse`), { requestInit: { headers: headers() } }),
    ],
  ] as const)("on %s", async (_, mode, transport) => {
    const count = await withClient(transport, mode, (client) =>
      lookupsOf(() => client.callTool({ name: TOOL, arguments: ARGS })),
    );
    expect(count).toBe(1);
  });

  it("on the stdio front", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const front = serveGatewayStdio(gw.gateway, { input, output });
    const lines: string[] = [];
    const answered = new Map<number, (line: string) => void>();
    output.setEncoding("utf8").on("data", (chunk: string) => {
      lines.push(...chunk.split("\n").filter((line) => line !== ""));
      for (const line of lines.splice(0)) {
        const id = (JSON.parse(line) as { id?: number }).id;
        if (id !== undefined) answered.get(id)?.(line);
      }
    });
    const request = (id: number, method: string, params: Record<string, unknown>) =>
      new Promise<Record<string, unknown>>((resolve) => {
        answered.set(id, (line) => resolve((JSON.parse(line) as { result: Record<string, unknown> }).result));
        input.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      });
    try {
      await request(1, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "one-lookup", version: "1" },
      });
      expect(await lookupsOf(() => request(2, "tools/call", { name: TOOL, arguments: ARGS }))).toBe(1);
    } finally {
      front.session.close();
    }
  });

  it("through search mode's call_tool", async () => {
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(gw.url), {
        requestInit: { headers: headers(TOKENS.searcher) },
      });
    const count = await withClient(transport, "auto", (client) =>
      lookupsOf(() => client.callTool({ name: "call_tool", arguments: { name: TOOL, arguments: ARGS } })),
    );
    expect(count).toBe(1);
  });

  it("and a completion's prompt too, by the gateway and by hub.complete", async () => {
    const ref = { type: "ref/prompt" as const, name: PROMPT };
    const argument = { name: "who", value: "A" };
    // The fixture has no completions: the server's own error is the answer; it was reached.
    promptLookups = 0;
    await withClient(
      () => new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: headers() } }),
      "auto",
      (client) => expect(client.complete({ ref, argument })).rejects.toThrow(/Method not found/),
    );
    expect(promptLookups).toBe(1);
    promptLookups = 0;
    await expect(gw.hub.complete(ref, argument)).rejects.toThrow(/Method not found/);
    expect(promptLookups).toBe(1);
  });

  it("and a completion's resource template, by the gateway and by hub.complete", async () => {
    const ref = { type: "ref/resource" as const, uri: TEMPLATE };
    const argument = { name: "resourceId", value: "1" };
    templateLookups = 0;
    resourceLookups = 0;
    const viaGateway = await withClient(
      () => new StreamableHTTPClientTransport(new URL(gw.url), { requestInit: { headers: headers() } }),
      "auto",
      (client) => client.complete({ ref, argument }),
    );
    expect(viaGateway.completion.values.length).toBeGreaterThan(0);
    expect([templateLookups, resourceLookups]).toEqual([1, 0]);
    templateLookups = 0;
    const viaHub = await gw.hub.complete(ref, argument);
    expect(viaHub.completion.values).toEqual(viaGateway.completion.values);
    expect([templateLookups, resourceLookups]).toEqual([1, 0]);
  });

  it("and a skill's URI by hub.getSkill", async () => {
    const [listed] = await gw.hub.skills();
    expect(listed?.server).toBe("sk");
    resourceLookups = 0;
    const skill = await gw.hub.getSkill(listed!.uri);
    expect(skill.uri).toBe(listed!.uri);
    expect(resourceLookups).toBe(1);
  });

  it("by the agent loop", async () => {
    const llm = await startMockLlm({
      turns: [
        { text: "", toolCalls: [{ name: TOOL, arguments: ARGS }] },
        (request) => ({ text: toolMessages(request.body)[0]?.content ?? "" }),
      ],
    });
    try {
      lookups = 0;
      const run = runAgent({ hub: gw.hub, llm: llm.llm, messages: [{ role: "user", content: "echo once" }] });
      const [text] = await Promise.all([collectText(run), collect(run)]);
      expect(text).toBe("echo: once");
      expect(lookups).toBe(1);
    } finally {
      await llm.close();
    }
  });

  it("by `mcplex call`", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mcplex-one-lookup-"));
    const file = join(dir, "mcplex.yaml");
    const printed: string[] = [];
    const log = console.log;
    try {
      const server = resolve("test/fixtures/servers/fixture-server.ts");
      await writeFile(
        file,
        `servers:\n  fx:\n    command: ${resolve("node_modules/.bin/tsx")}\n    args: [${server}]\n`,
      );
      console.log = (...line: unknown[]) => void printed.push(line.join(" "));
      lookups = 0;
      const code = await callCommand([TOOL, JSON.stringify(ARGS), "--config", file]);
      expect([code, printed.join("\n")]).toEqual([0, "echo: once"]);
      expect(lookups).toBe(1);
    } finally {
      console.log = log;
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
