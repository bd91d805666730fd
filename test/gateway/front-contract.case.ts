import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, type Transport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, resultText, yamlConfig } from "../support/gateway.js";
import { fileHasLine } from "../support/wait.js";

/**
 * The gateway's front contract: the official SDK v2 client, in both protocol generations,
 * against `mcplex serve` in front of the fixture (dual-era and 2025-only), server-everything
 * and server-memory. Every front (stdio, HTTP, WebSocket) runs this same suite; each test
 * file only says how to start the gateway and open a transport to it.
 */
export interface FrontUnderTest {
  /** Starts `mcplex serve` on the config file; resolves with how to reach it and stop it. */
  start(config: string): Promise<{ transport: () => Transport; stop: () => Promise<unknown> }>;
}

export function frontContract(name: string, front: FrontUnderTest): void {
  let dir: string;
  let served: Awaited<ReturnType<FrontUnderTest["start"]>>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "mcplex-front-"));
    const config = join(dir, "mcplex.yaml");
    await writeFile(
      config,
      yamlConfig({
        fx: { ...COMMANDS.fixture, env: { FIXTURE_LOG: join(dir, "fx.log") } },
        legacy: { ...COMMANDS.legacyFixture, env: { FIXTURE_LOG: join(dir, "legacy.log") } },
        everything: COMMANDS.everything,
        memory: { ...COMMANDS.memory, env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
      }),
    );
    served = await front.start(config);
  });
  afterAll(async () => {
    await served?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  describe.each([
    ["2025 (initialize)", "legacy", "2025-11-25"],
    ["2026-07-28 (stateless)", "auto", "2026-07-28"],
  ] as const)(`${name} with an SDK v2 client speaking %s`, (_label, mode, version) => {
    let client: Client;
    beforeAll(async () => {
      client = new Client(
        { name: "gateway-front-test", version: "1.0.0" },
        { versionNegotiation: { mode }, capabilities: { elicitation: {} } },
      );
      client.setRequestHandler("elicitation/create", async () => ({
        action: "accept",
        content: { name: "Grace" },
      }));
      await client.connect(served.transport());
    });
    afterAll(() => client?.close());

    it("negotiates the expected protocol version", () => {
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
    });

    it("lists the tools of every upstream under namespaced names", async () => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const tool of ["fx__echo", "legacy__echo", "everything__echo", "memory__read_graph"]) {
        expect(names).toContain(tool);
      }
    });

    it("calls tools of server-everything and server-memory", async () => {
      expect(
        resultText(await client.callTool({ name: "everything__echo", arguments: { message: "hi" } })),
      ).toBe("Echo: hi");
      const person = `Hopper-${name}-${mode}`;
      await client.callTool({
        name: "memory__create_entities",
        arguments: { entities: [{ name: person, entityType: "person", observations: ["used the gateway"] }] },
      });
      expect(resultText(await client.callTool({ name: "memory__read_graph", arguments: {} }))).toContain(
        person,
      );
    });

    it("relays progress with the client's own token", async () => {
      const seen: number[] = [];
      const result = await client.callTool(
        { name: "fx__slow", arguments: { ms: 300, step: 100 } },
        { onprogress: (p) => seen.push(p.progress) },
      );
      expect(resultText(result)).toBe("slept 300");
      // How many steps fit in 300 ms depends on the machine's load; at least one always does.
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    });

    it.each(["fx", "legacy"])("passes the client's cancellation on to the %s upstream", async (server) => {
      const tag = `${name}-${mode}-${server}`.replace(/\W+/g, "_");
      const controller = new AbortController();
      let running!: () => void;
      const started = new Promise<void>((resolve) => {
        running = resolve;
      });
      const call = client.callTool(
        { name: `${server}__slow`, arguments: { ms: 60_000, step: 50, tag } },
        { signal: controller.signal, onprogress: () => running() },
      );
      await started; // the upstream is running the call: its progress came through
      controller.abort();
      await expect(call).rejects.toThrow();
      await fileHasLine(join(dir, `${server}.log`), `cancelled ${tag}`);
    });

    it("routes elicitation from a 2026 and from a 2025 upstream to this client", async () => {
      expect(resultText(await client.callTool({ name: "fx__ask_name", arguments: {} }))).toBe("hello Grace");
      expect(resultText(await client.callTool({ name: "legacy__ask_name", arguments: {} }))).toBe(
        "hello Grace",
      );
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
      expect(resultText(await client.callTool({ name: "fx__echo", arguments: { message: "still" } }))).toBe(
        "echo: still",
      );
    });
  });
}
