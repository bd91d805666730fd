import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hub } from "../../src/hub/hub.js";
import type { HubEvent } from "../../src/hub/hub-types.js";
import { configOf, stdio } from "../support/config.js";
import {
  postRev2026,
  resultText,
  rev2026Request,
  type ServeProcess,
  serveHttp,
  yamlConfig,
} from "../support/gateway.js";

// Older and hand-written servers declare `resources` (or `prompts`) and answer some of the
// lists with -32601: such a list is read as empty and the server starts, as with the SDK client.
const PARTIAL = resolve("test/fixtures/servers/partial-lists-server.mjs");

describe("a server that declares lists it does not implement", { timeout: 60_000 }, () => {
  it("starts in the hub, with those lists empty and its tools working", async () => {
    const hub = new Hub({ config: configOf([stdio("old", process.execPath, [PARTIAL])]) });
    const unimplemented: HubEvent[] = [];
    hub.on((event) => {
      if (event.type === "list-not-implemented") unimplemented.push(event);
    });
    try {
      await hub.start();
      expect(hub.servers()[0]).toMatchObject({ name: "old", state: "ready" });
      expect(hub.tools().map((t) => t.name)).toEqual(["old__echo"]);
      expect(hub.resources().map((r) => r.uri)).toEqual(["memo://one"]);
      expect(hub.resourceTemplates()).toEqual([]);
      expect(hub.prompts()).toEqual([]);
      const result = await hub.callTool("old__echo", { message: "hi" });
      expect(resultText(result)).toBe("echo: hi");
      expect(unimplemented.map((e) => e.type === "list-not-implemented" && e.method).sort()).toEqual([
        "prompts/list",
        "resources/templates/list",
      ]);
    } finally {
      await hub.close();
    }
  });

  describe("through mcplex serve --debug", () => {
    let dir: string;
    let gw: ServeProcess;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "mcplex-partial-"));
      const config = join(dir, "mcplex.yaml");
      await writeFile(config, yamlConfig({ old: { command: process.execPath, args: [PARTIAL] } }));
      gw = await serveHttp(["--config", config, "--debug"]);
    });
    afterAll(async () => {
      await gw?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it("serves it, calls its tool and says on a debug line which list it read as empty", async () => {
      expect(gw.stderr()).toContain("1 of 1 servers ready");
      expect(gw.stderr()).toContain(
        'mcplex: debug: old answers resources/templates/list with "method not found" though it declares the capability; read as an empty list',
      );
      expect(gw.stderr()).toContain("mcplex: debug: old answers prompts/list");
      const call = await postRev2026(
        gw.url,
        rev2026Request(1, "tools/call", { name: "old__echo", arguments: { message: "hi" } }),
      );
      expect(call.status).toBe(200);
      expect(resultText((call.json as { result: unknown }).result)).toBe("echo: hi");
      const templates = await postRev2026(gw.url, rev2026Request(2, "resources/templates/list"));
      expect((templates.json as { result: unknown }).result).toMatchObject({ resourceTemplates: [] });
    });
  });
});
