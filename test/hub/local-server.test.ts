import { afterEach, describe, expect, it } from "vitest";
import type { McplexConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { LocalServer } from "../../src/upstream/local-server.js";

let hub: Hub | undefined;
afterEach(async () => {
  await hub?.close();
  hub = undefined;
});

function hubOf(server: LocalServer): Hub {
  const config = {
    source: "test",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [
      {
        name: "app",
        transport: "local",
        server,
        prefix: "",
        enabled: true,
        lazy: false,
        timeout: 10_000,
        startTimeout: 10_000,
        tools: {},
      },
    ],
  } as unknown as McplexConfig;
  return new Hub({ config });
}

describe("LocalServer", () => {
  it("never lets a listener a tool left on its signal hear a later call's cancellation", async () => {
    // Controllers of finished calls are reused; one that a handler still listens to must not be.
    const heard: string[] = [];
    let release: (() => void) | undefined;
    const server = new LocalServer("app", [
      {
        name: "leaves_listener",
        handler: (_args, { signal }) => {
          signal.addEventListener("abort", () => heard.push("first call's listener"));
          return { content: [{ type: "text", text: "done" }] };
        },
      },
      {
        name: "waits",
        handler: (_args, { signal }) =>
          new Promise((resolve) => {
            release = () => resolve({ content: [{ type: "text", text: "released" }] });
            signal.addEventListener("abort", () => {
              heard.push("second call's listener");
              resolve({ content: [{ type: "text", text: "cancelled" }] });
            });
          }),
      },
    ]);
    hub = hubOf(server);
    await hub.start();
    await hub.callTool("leaves_listener", {}, {});
    const cancel = new AbortController();
    const second = hub.callTool("waits", {}, { signal: cancel.signal });
    await expect.poll(() => release).toBeDefined();
    const cancelled = expect(second).rejects.toThrow(/aborted/);
    cancel.abort();
    await cancelled;
    await expect.poll(() => heard).toEqual(["second call's listener"]);
  });

  it("answers many calls in turn, each with a signal that is not aborted", async () => {
    const server = new LocalServer("app", [
      {
        name: "echo",
        handler: (args, { signal }) => ({
          content: [{ type: "text", text: `${String(args.n)} ${signal.aborted}` }],
        }),
      },
    ]);
    hub = hubOf(server);
    await hub.start();
    for (let n = 0; n < 50; n++) {
      const result = await hub.callTool("echo", { n }, {});
      expect(result.content).toEqual([{ type: "text", text: `${n} false` }]);
    }
  });
});
