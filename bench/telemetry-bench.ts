/**
 * What tracing costs per call: a 2025 session on an in-process gateway, a tool of a LocalServer
 * behind it, with telemetry off and on (spans and metrics exported over OTLP/HTTP to a receiver
 * here that drops them), in alternating rounds; the median ratio of time per call.
 *
 *   npx tsx bench/telemetry-bench.ts [--rounds R] [--calls N]
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTelemetry } from "../src/assembly/telemetry.js";
import type { McplexConfig } from "../src/config/types.js";
import { Gateway } from "../src/gateway/gateway.js";
import { Hub } from "../src/hub/hub.js";
import { telemetrySettings } from "../src/telemetry/settings.js";
import { LocalServer } from "../src/upstream/local-server.js";
import { median } from "./interleaved.js";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const ROUNDS = arg("--rounds", 8);
const CALLS = arg("--calls", 20_000);

const sink = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
});
await new Promise<void>((r) => sink.listen(0, "127.0.0.1", r));
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

async function target(traced: boolean) {
  const server = new LocalServer("app", [
    {
      name: "echo",
      inputSchema: { type: "object" },
      handler: async (args) => ({ content: [{ type: "text", text: String(args.message) }] }),
    },
  ]);
  const config = {
    source: "bench",
    format: "mcplex",
    profiles: {},
    tokens: [],
    secrets: [],
    servers: [
      {
        name: "app",
        transport: "local",
        server,
        enabled: true,
        lazy: false,
        timeout: 10_000,
        startTimeout: 10_000,
        tools: {},
      },
    ],
  } as unknown as McplexConfig;
  const telemetry = traced ? startTelemetry(telemetrySettings({ enabled: true, endpoint }, {})!) : undefined;
  const hub = new Hub({
    config,
    ...(telemetry === undefined ? {} : { upstreamInterceptors: [telemetry.upstream] }),
  });
  await hub.start();
  const gateway = new Gateway(hub, { interceptors: telemetry === undefined ? [] : [telemetry.gateway] });
  const pending = new Map<number, () => void>();
  const session = gateway.openSession({
    send(m) {
      const id = (m as { id?: number }).id;
      if (id !== undefined) pending.get(id)?.();
      return true;
    },
    close() {},
  });
  let id = 0;
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<void>((resolve) => {
      const i = ++id;
      pending.set(i, () => {
        pending.delete(i);
        resolve();
      });
      session.receive({ jsonrpc: "2.0", id: i, method, params });
    });
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "b", version: "1" },
  });
  const run = async (count: number) => {
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next++ < count)
          await request("tools/call", { name: "app__echo", arguments: { message: "hi" } });
      }),
    );
    return Number(process.hrtime.bigint() - started) / count;
  };
  await run(CALLS); // warm-up
  return {
    run,
    close: async () => {
      await hub.close();
      await telemetry?.shutdown();
    },
  };
}

const off = await target(false);
const on = await target(true);
const ratios: number[] = [];
const ns = { off: [] as number[], on: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const first = round % 2 === 0 ? "off" : "on";
  const a = await (first === "off" ? off : on).run(CALLS);
  const b = await (first === "off" ? on : off).run(CALLS);
  const offNs = first === "off" ? a : b;
  const onNs = first === "off" ? b : a;
  ns.off.push(offNs);
  ns.on.push(onNs);
  ratios.push(onNs / offNs);
}
await off.close();
await on.close();
sink.close();
console.log(`tools/call in process, 64 in flight, ${ROUNDS} rounds of ${CALLS} calls (medians):`);
console.log(`  telemetry off  ${(median(ns.off) / 1000).toFixed(1)} µs/call`);
console.log(
  `  telemetry on   ${(median(ns.on) / 1000).toFixed(1)} µs/call  (SERVER + CLIENT span, two histograms, _meta injection)`,
);
console.log(
  `  on / off       ${median(ratios).toFixed(2)}  (rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
);
