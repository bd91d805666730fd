import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

let dir: string;
let config: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-gw-stdio-"));
  config = join(dir, "mcplex.yaml");
  const tsx = resolve("node_modules/.bin/tsx");
  const fixture = resolve("test/fixtures/servers/fixture-server.ts");
  await writeFile(
    config,
    [
      "servers:",
      "  fx:",
      `    command: ${tsx}`,
      `    args: [${fixture}]`,
      "  legacy:",
      `    command: ${tsx}`,
      `    args: [${fixture}, --legacy-only]`,
      "  everything:",
      `    command: ${resolve("node_modules/.bin/mcp-server-everything")}`,
      "    args: [stdio]",
      "  memory:",
      `    command: ${resolve("node_modules/.bin/mcp-server-memory")}`,
      "    env:",
      `      MEMORY_FILE_PATH: ${join(dir, "memory.jsonl")}`,
      "",
    ].join("\n"),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function text(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("");
}

async function connect(mode: "legacy" | "auto"): Promise<Client> {
  const client = new Client(
    { name: "gateway-test", version: "1.0.0" },
    { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
  );
  client.setRequestHandler("elicitation/create", async () => ({
    action: "accept",
    content: { name: "Grace" },
  }));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, "serve", "--stdio", "--config", config],
      stderr: "ignore",
    }),
  );
  return client;
}

describe.each([
  ["2025 (initialize)", "legacy", "2025-11-25"],
  ["2026-07-28 (stateless)", "auto", "2026-07-28"],
] as const)("mcplex serve --stdio with an SDK v2 client speaking %s", (_label, mode, version) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(mode);
  });
  afterAll(() => client?.close());

  it("negotiates the expected protocol version", () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(version);
  });

  it("lists the tools of every upstream under namespaced names", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const name of ["fx__echo", "legacy__echo", "everything__echo", "memory__read_graph"])
      expect(names).toContain(name);
  });

  it("calls tools of server-everything and server-memory", async () => {
    expect(text(await client.callTool({ name: "everything__echo", arguments: { message: "hi" } }))).toBe(
      "Echo: hi",
    );
    const person = `Ada-${mode}`;
    await client.callTool({
      name: "memory__create_entities",
      arguments: { entities: [{ name: person, entityType: "person", observations: ["tested the gateway"] }] },
    });
    expect(text(await client.callTool({ name: "memory__read_graph", arguments: {} }))).toContain(person);
  });

  it("relays progress with the client's own token", async () => {
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "fx__slow", arguments: { ms: 300, step: 100 } },
      { onprogress: (p) => seen.push(p.progress) },
    );
    expect(text(result)).toBe("slept 300");
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });

  it("routes elicitation from a 2026 and from a 2025 upstream to this client", async () => {
    expect(text(await client.callTool({ name: "fx__ask_name", arguments: {} }))).toBe("hello Grace");
    expect(text(await client.callTool({ name: "legacy__ask_name", arguments: {} }))).toBe("hello Grace");
  });

  it("reads resources and prompts through the gateway", async () => {
    const readme = await client.readResource({ uri: "fixture://readme" });
    expect(JSON.stringify(readme.contents)).toContain("fixture readme");
    const prompt = await client.getPrompt({ name: "fx__greet", arguments: { who: "Linus" } });
    expect(JSON.stringify(prompt.messages)).toContain("Say hello to Linus");
  });

  it("answers an unknown tool with a precise error and keeps serving", async () => {
    await expect(client.callTool({ name: "fx__nope", arguments: {} })).rejects.toThrow(
      /Unknown tool: fx__nope/,
    );
    expect(text(await client.callTool({ name: "fx__echo", arguments: { message: "still" } }))).toBe(
      "echo: still",
    );
  });
});
