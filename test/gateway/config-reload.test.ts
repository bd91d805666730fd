import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS, type ServeProcess, serveHttp, yamlConfig } from "../support/gateway.js";

let dir: string;
let config: string;
let gw: ServeProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mcplex-reload-"));
  config = join(dir, "mcplex.yaml");
  await writeFile(config, yamlConfig({ fx: COMMANDS.fixture }));
  gw = await serveHttp(["--config", config]);
});
afterAll(async () => {
  await gw?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("mcplex serve with a config file that changes", () => {
  it("adds and removes servers while clients stay connected, and tells them", async () => {
    const client = new Client(
      { name: "reload-test", version: "1" },
      { versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
    try {
      const names = async () => (await client.listTools()).tools.map((t) => t.name);
      expect(await names()).toContain("fx__echo");
      const changed = (predicate: (tools: string[]) => boolean) =>
        new Promise<void>((done) =>
          client.setNotificationHandler("notifications/tools/list_changed", async () => {
            if (predicate(await names())) done();
          }),
        );

      const added = changed((tools) => tools.includes("memory__read_graph"));
      await writeFile(config, yamlConfig({ fx: COMMANDS.fixture, memory: COMMANDS.memory }));
      await added;
      const graph = await client.callTool({ name: "memory__read_graph", arguments: {} });
      expect(graph.isError).not.toBe(true);

      const removed = changed((tools) => !tools.includes("fx__echo"));
      await writeFile(config, yamlConfig({ memory: COMMANDS.memory }));
      await removed;
      expect(await names()).toContain("memory__read_graph");

      // A file that does not load changes nothing, and says why (bounded wait for the log line).
      await writeFile(config, "servers:\n  memory: {comand: oops}\n");
      for (let i = 0; i < 200 && !gw.stderr().includes("config not reloaded"); i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(gw.stderr()).toMatch(/config not reloaded:[\s\S]*unknown key "comand"/);
      const still = await client.callTool({ name: "memory__read_graph", arguments: {} });
      expect(still.isError).not.toBe(true);
    } finally {
      await client.close();
    }
  });
});
