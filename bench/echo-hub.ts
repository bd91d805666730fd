/**
 * The hub the HTTP benches serve: one in-process `echo` tool (a LocalServer, no prefix), started.
 * Imported from dist/ as mcplex ships (run `npm run build` first).
 */
import { Hub } from "../dist/hub/hub.js";
import { LocalServer } from "../dist/upstream/local-server.js";

export async function startEchoHub(): Promise<Hub> {
  const local = new LocalServer("echo", [
    {
      name: "echo",
      inputSchema: { type: "object", properties: { message: { type: "string" } } },
      handler: (args) => ({ content: [{ type: "text", text: String(args.message) }] }),
    },
  ]);
  const hub = new Hub({
    config: {
      source: "bench",
      format: "mcplex",
      profiles: {},
      tokens: [],
      secrets: [],
      servers: [
        {
          name: "echo",
          transport: "local",
          server: local,
          prefix: "",
          enabled: true,
          lazy: false,
          timeout: 60_000,
          startTimeout: 60_000,
          tools: {},
        },
      ],
    },
  });
  await hub.start();
  return hub;
}
