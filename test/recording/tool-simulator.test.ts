import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/client/validators/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { ToolSimulator } from "../../src/recording/tool-simulator.js";
import { configOf, EVERYTHING, MEMORY, stdio } from "../support/config.js";

const dir = mkdtempSync(join(tmpdir(), "mcplex-simulator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Tool = Record<string, unknown> & { name: string; outputSchema?: Record<string, unknown> };
let tools: Tool[] = [];

beforeAll(async () => {
  const hub = new Hub({
    config: configOf([
      stdio("everything", EVERYTHING, ["stdio"]),
      stdio("memory", MEMORY, [], {
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
      } as Partial<ServerConfig>),
    ]),
  });
  try {
    await hub.start();
    tools = ["everything", "memory"].flatMap(
      (server) => hub.serverDetails(server)!.tools as unknown as Tool[],
    );
  } finally {
    await hub.close();
  }
}, 60_000);

const validator = new AjvJsonSchemaValidator();

describe("a simulator built from real servers' tool lists", () => {
  it("answers every tool with an output schema with structured content that validates against it", () => {
    const typed = tools.filter((tool) => tool.outputSchema !== undefined);
    // server-everything's get-structured-content and server-memory's graph tools.
    expect(typed.length).toBeGreaterThanOrEqual(4);
    const simulator = new ToolSimulator({ server: "real", tools, seed: 7 });
    for (const tool of typed) {
      for (const args of [{}, { query: "a" }, { names: ["x"] }]) {
        const lookup = simulator.lookup("tools/call", { name: tool.name, arguments: args });
        expect(lookup.found).toBe(true);
        if (!lookup.found) continue;
        const result = (lookup.exchange.answer as { result: Record<string, unknown> }).result;
        const check = validator.getValidator(tool.outputSchema as never)(result.structuredContent);
        expect(
          check.errorMessage,
          `${tool.name}: ${JSON.stringify(result.structuredContent)}`,
        ).toBeUndefined();
        expect(check.valid).toBe(true);
        expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(
          result.structuredContent,
        );
      }
    }
  });

  it("answers a tool without an output schema with plain text saying it is simulated", () => {
    const simulator = new ToolSimulator({ server: "real", tools, seed: 7 });
    const lookup = simulator.lookup("tools/call", { name: "echo", arguments: { message: "hi" } });
    expect(lookup.found).toBe(true);
    if (!lookup.found) return;
    const result = (lookup.exchange.answer as { result: Record<string, unknown> }).result;
    expect(result.structuredContent).toBeUndefined();
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/^Simulated result of echo: /);
  });

  it("gives the same results for the same seed and other results for another", () => {
    const answers = (seed: number) => {
      const simulator = new ToolSimulator({ server: "real", tools, seed });
      return tools.map((tool) => {
        const lookup = simulator.lookup("tools/call", { name: tool.name, arguments: { n: 1 } });
        return lookup.found ? lookup.exchange.answer : lookup.reason;
      });
    };
    expect(answers(42)).toEqual(answers(42));
    expect(answers(42)).not.toEqual(answers(43));
  });

  it("refuses an unknown tool naming the nearest, and methods other than tools/call", () => {
    const simulator = new ToolSimulator({ server: "real", tools, seed: 1 });
    const unknown = simulator.lookup("tools/call", { name: "read_grap", arguments: {} });
    expect(unknown).toMatchObject({ found: false, closest: { params: { name: "read_graph" } } });
    expect(simulator.lookup("resources/read", { uri: "x" })).toMatchObject({
      found: false,
      reason: expect.stringContaining("answers tools/call only"),
    });
  });
});

describe("a simulated server in the hub", () => {
  it("serves the tool list, marks results simulated and sends progress to calls that ask", async () => {
    const server = {
      name: "memory",
      enabled: true,
      timeout: 10_000,
      startTimeout: 10_000,
      lazy: false,
      tools: {},
      transport: "replay",
      recording: [],
      mode: "sequential",
      speed: 0,
      simulator: { tools: tools.filter((t) => ["read_graph", "create_entities"].includes(t.name)), seed: 5 },
    } as ServerConfig;
    const hub = new Hub({ config: configOf([server]) });
    try {
      await hub.start();
      expect(hub.servers()[0]).toMatchObject({ state: "ready", simulated: "tool-list" });
      expect(
        hub
          .tools()
          .map((t) => t.name)
          .sort(),
      ).toEqual(["memory__create_entities", "memory__read_graph"]);
      const progress: number[] = [];
      const result = await hub.callTool(
        "memory__read_graph",
        {},
        { onProgress: (p) => progress.push(p.progress) },
      );
      expect(progress).toEqual([1, 2, 3]);
      expect(result._meta?.["mcplex/simulated"]).toBe(true);
      const schema = tools.find((t) => t.name === "read_graph")!.outputSchema!;
      expect(validator.getValidator(schema as never)(result.structuredContent).valid).toBe(true);
      const again = await hub.callTool("memory__read_graph", {});
      expect(again.structuredContent).toEqual(result.structuredContent);
    } finally {
      await hub.close();
    }
  });
});
