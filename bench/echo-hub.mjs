/**
 * The hub the HTTP benches serve: one in-process `echo` tool (a LocalServer, no prefix), started.
 * Imported from dist/ as mcplex ships (run `npm run build` first). Plain JavaScript, so that
 * plain node runs it too (bench/gateway-http-callgrind.mjs, under valgrind) as tsx does.
 *
 * @returns {Promise<import("../dist/hub/hub.js").Hub>}
 */
export async function startEchoHub() {
  const dist = new URL("../dist/", import.meta.url);
  const { Hub } = await import(new URL("hub/hub.js", dist).href);
  const { LocalServer } = await import(new URL("upstream/local-server.js", dist).href);
  const local = new LocalServer("echo", [
    {
      name: "echo",
      inputSchema: { type: "object", properties: { message: { type: "string" } } },
      handler: (/** @type {{ message?: unknown }} */ args) => ({
        content: [{ type: "text", text: String(args.message) }],
      }),
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
