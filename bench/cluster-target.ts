/**
 * One replica of bench/cluster-bench.ts, in its own process: the gateway's HTTP front with an
 * in-process echo tool (as bench/http-target.ts), the dashboard off; `--cluster URL --id ID`
 * makes it a replica of a cluster sharing that Redis. Prints `url <url>` when listening.
 * Imported from dist/ (run `npm run build` first).
 */
import { Cluster } from "../dist/cluster/cluster.js";
import { startHttpFront } from "../dist/fronts/http-front.js";
import { Gateway } from "../dist/gateway/gateway.js";
import { Hub } from "../dist/hub/hub.js";
import { LocalServer } from "../dist/upstream/local-server.js";

const arg = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const redisUrl = arg("--cluster");
const id = arg("--id") ?? "r";

const local = new LocalServer("echo", [
  {
    name: "echo",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
    handler: (args) => ({ content: [{ type: "text" as const, text: String(args.message) }] }),
  },
]);
const config = {
  source: "bench",
  format: "mcplex" as const,
  profiles: {},
  tokens: [],
  secrets: [],
  servers: [
    {
      name: "echo",
      transport: "local" as const,
      server: local,
      prefix: "",
      enabled: true,
      lazy: false,
      timeout: 60_000,
      startTimeout: 60_000,
      tools: {},
    },
  ],
};
const hub = new Hub({ config });
await hub.start();
const cluster =
  redisUrl === undefined
    ? undefined
    : new Cluster({ url: redisUrl, secret: "bench-cluster-secret-0123456789abcdefgh", id });
const gateway = new Gateway(
  hub,
  cluster === undefined ? {} : { replica: { id: cluster.replica, stateKey: cluster.stateKey } },
);
const front = await startHttpFront(gateway, {
  port: 0,
  websocket: false,
  dashboard: false,
  ...(cluster === undefined ? {} : { cluster }),
});
await cluster?.start(new URL(front.url).origin, config);
process.stdout.write(`url ${front.url}\n`);
