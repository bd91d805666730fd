/**
 * The raw path: a gateway relays a tool's result as the server's text (a RawJson, never parsed)
 * while every interceptor on the way declares `needs: "raw"`, and parses it once one declares
 * nothing (or `"parsed"`). Three gateways on the same echo server, measured interleaved in one
 * run: none of ours on the path (the baseline), raw-declared interceptors on the hub, the
 * gateway and upstream, and one that declares nothing. Prints whether each path stayed raw and
 * its ratios against the baseline; absolute numbers on shared machines are noise.
 *
 *   npx tsx bench/raw-path.ts [--calls N]
 */

import { ANSWERING_CAPABILITIES, Gateway } from "../src/assembly/entries/gateway.js";
import type { ServerConfig } from "../src/config/types.js";
import {
  type Handler,
  type Interceptor,
  interceptor,
  type RequestContext,
} from "../src/hub/call-pipeline.js";
import { Hub } from "../src/hub/hub.js";
import { RawJson } from "../src/protocol/raw-json.js";
import { type Call, measureInterleaved } from "./interleaved.js";

const ECHO = new URL("./echo-server.mjs", import.meta.url).pathname;
const argCalls = process.argv.indexOf("--calls");
const CALLS = argCalls === -1 ? 5_000 : Number(process.argv[argCalls + 1]);

const server = {
  name: "echo",
  transport: "stdio",
  command: process.execPath,
  args: [ECHO],
  env: {},
  enabled: true,
  lazy: false,
  timeout: 10_000,
  startTimeout: 20_000,
  tools: {},
} as unknown as ServerConfig;

/** A layer that counts the calls it sees and reads nothing of their results. */
const counts = { calls: 0 };
const counting = (): ((next: Handler) => Handler) => (next) => (request) => {
  counts.calls++;
  return next(request);
};

/** A 2025 session's context, as a front makes one per request. */
function contextOf(): RequestContext {
  return {
    stateless: false,
    protocolVersion: "2025-11-25",
    clientCapabilities: {},
    signal: new AbortController().signal,
    notify: () => {},
  };
}

/** A hub and a gateway on the echo server, with `setUp` adding interceptors to them. */
async function gatewayWith(setUp: (hub: Hub, gateway: Gateway) => void) {
  const config = {
    source: "bench",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [server],
  };
  const hub = new Hub({ config: config as never, clientCapabilities: ANSWERING_CAPABILITIES });
  const gateway = new Gateway(hub, { ready: hub.start() });
  await gateway.ready;
  setUp(hub, gateway);
  let id = 0;
  const call: Call = () =>
    gateway.handle(
      gateway.request(++id, "tools/call", { name: "echo__echo", arguments: { message: "hi" } }, contextOf()),
    );
  const raw = (await call()) instanceof RawJson;
  const close = async () => {
    gateway.close();
    await hub.close();
  };
  return { call, raw, close };
}

const raw = (): Interceptor => interceptor({ needs: "raw" }, counting());
const paths = [
  { name: "no interceptor (baseline)", setUp: () => {} },
  {
    name: "3 declaring needs: raw (hub, gateway, upstream)",
    setUp: (hub: Hub, gateway: Gateway) => {
      hub.use(raw());
      gateway.use(raw());
      hub.use(raw(), { at: "upstream" });
    },
  },
  {
    name: "1 declaring nothing (gateway)",
    setUp: (_: Hub, gateway: Gateway) => {
      gateway.use(counting());
    },
  },
];
const gateways = await Promise.all(paths.map((path) => gatewayWith(path.setUp)));
const results = await measureInterleaved(
  gateways.map((g) => g.call),
  { calls: CALLS, inFlight: 64, sequential: 2_000 },
);
const [base] = results;
console.log(`raw path: ${CALLS} calls per path, interleaved, ratios against the baseline of this run`);
paths.forEach((path, i) => {
  const r = results[i]!;
  console.log(
    `  ${path.name.padEnd(50)} raw: ${gateways[i]!.raw ? "yes" : "no "}  throughput ×${(r.callsPerSecond / base!.callsPerSecond).toFixed(2)}  p50 ×${(r.p50 / base!.p50).toFixed(2)}`,
  );
});
for (const g of gateways) await g.close();
