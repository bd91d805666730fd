/**
 * Cluster mode's costs, in one run (real Redis and nginx from Debian; see scripts/ensure-*.mjs):
 *   1. its own cost: server CPU per 2026 call of a replica in cluster mode against the same
 *      replica without it (target <= 1.1x);
 *   2. a 2025 request forwarded between replicas against one that lands on its owner: p50 of
 *      sequential calls (target <= 1.6x), through nginx as deployed, and straight to the
 *      replicas with a bare node:http proxy process as the floor of any hop;
 *   3. scale: the same load through nginx round-robin to 1, 2 and 3 replicas: calls/s, calls/s
 *      per replica and per core used, and server CPU per call (must not grow with replicas).
 * Each replica is a process (bench/cluster-target.ts) with an in-process echo tool.
 *
 *   npm run build && npx tsx bench/cluster-bench.ts [--rounds R] [--seconds S]
 */
import { execFileSync } from "node:child_process";
import { Agent, request } from "node:http";
import { startNginx } from "../test/support/nginx.js";
import { startRedis } from "../test/support/redis.js";
import { post } from "./http-post.js";
import { measureInterleaved, median } from "./interleaved.js";
import { cpuSeconds, listening, numberArg } from "./process-stats.js";

const ROUNDS = numberArg("--rounds", 5);
const SECONDS = numberArg("--seconds", 1.5);
const CONNECTIONS = 64;
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
};

interface Replica {
  url: URL;
  origin: string;
  cpu: () => number;
  stop: () => void;
}

async function replica(args: string[]): Promise<Replica> {
  const target = new URL("./cluster-target.ts", import.meta.url).pathname;
  const { url, child } = await listening(["--import", "tsx", target, ...args], "replica");
  return { url, origin: url.origin, cpu: () => cpuSeconds(child.pid!), stop: () => child.kill() };
}

/** bench/bare-proxy.mjs in front of `target`. */
async function proxyProcess(target: URL): Promise<{ url: URL; stop: () => void }> {
  const proxy = new URL("./bare-proxy.mjs", import.meta.url).pathname;
  const { url, child } = await listening([proxy, target.href], "proxy");
  return { url, stop: () => child.kill() };
}

/** CPU seconds nginx's workers (the children of its master) have used. */
function nginxCpu(master: number): () => number {
  const pids = execFileSync("pgrep", ["-P", String(master)], { encoding: "utf8" })
    .trim()
    .split(/\s+/)
    .map(Number);
  return () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
}

const HEADERS_2026 = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "echo",
};
let nextId = 1;
const call2026 = (agent: Agent, url: URL) =>
  post(
    agent,
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method: "tools/call",
      params: { _meta: META, name: "echo", arguments: { message: "hi" } },
    }),
    HEADERS_2026,
  );

/** Keeps 64 calls in flight for SECONDS; calls per second. */
async function load(agent: Agent, url: URL): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await call2026(agent, url);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/**
 * Sends calls at `rate` per second for SECONDS (open loop, at most CONNECTIONS in flight);
 * calls per second answered.
 */
async function paced(agent: Agent, url: URL, rate: number): Promise<number> {
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  const inFlight = new Set<Promise<unknown>>();
  let sent = 0;
  while (performance.now() < deadline) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (sent < due && inFlight.size < CONNECTIONS) {
      const call: Promise<unknown> = call2026(agent, url).finally(() => inFlight.delete(call));
      inFlight.add(call);
      sent++;
    }
    // A bench's pacing, not a test's wait: the next batch falls due in about a millisecond.
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  return sent / ((performance.now() - started) / 1000);
}

/**
 * Calls/s and server CPU µs per call of `replicas` loaded through `url`: as fast as they
 * answer, or paced at `rate` calls/s.
 */
async function measure(
  url: URL,
  replicas: Replica[],
  proxyCpu: () => number = () => 0,
  rate?: number,
): Promise<{ rate: number; cpuPerCall: number; cores: number; proxyPerCall: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  for (let i = 0; i < 300; i++) await call2026(agent, url);
  const before = replicas.reduce((sum, r) => sum + r.cpu(), 0);
  const proxyBefore = proxyCpu();
  const started = performance.now();
  const answered = rate === undefined ? await load(agent, url) : await paced(agent, url, rate);
  const wall = (performance.now() - started) / 1000;
  const used = replicas.reduce((sum, r) => sum + r.cpu(), 0) - before;
  const proxyUsed = proxyCpu() - proxyBefore;
  agent.destroy();
  const calls = answered * wall;
  return {
    rate: answered,
    cpuPerCall: (used * 1e6) / calls,
    cores: used / wall,
    proxyPerCall: (proxyUsed * 1e6) / calls,
  };
}

const redis = await startRedis();
const stops: Array<() => unknown> = [() => redis.stop()];
try {
  // 1. Cluster mode's own cost.
  const plain = await replica([]);
  const clustered = await replica(["--cluster", redis.url, "--id", "c1"]);
  stops.push(plain.stop, clustered.stop);
  const cost = { plain: [] as number[], clustered: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (["plain", "clustered"] as const) : (["clustered", "plain"] as const);
    for (const which of order) {
      const target = which === "plain" ? plain : clustered;
      cost[which].push((await measure(target.url, [target])).cpuPerCall);
    }
  }
  plain.stop();
  const ownCost = cost.clustered.map((c, i) => c / cost.plain[i]!);

  // 2. A 2025 request forwarded to its owner against one sent to the owner.
  const second = await replica(["--cluster", redis.url, "--id", "c2"]);
  stops.push(second.stop);
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const init = await new Promise<string>((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    });
    const req = request(
      clustered.url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(String(res.headers["mcp-session-id"])));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
  const sessionHeaders = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-session-id": init,
    "mcp-protocol-version": "2025-06-18",
  };
  await post(
    agent,
    clustered.url,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    sessionHeaders,
  );
  const call2025 = (url: URL) =>
    post(
      agent,
      url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: nextId++,
        method: "tools/call",
        params: { name: "echo", arguments: { message: "hi" } },
      }),
      sessionHeaders,
    );
  // The floor of any hop through a third process here: a bare proxy in front of the owner.
  const bare = await proxyProcess(clustered.url);
  stops.push(bare.stop);
  // As deployed: through a load balancer that lands the request on the owner (sticky
  // routing, or round-robin's lucky turn) or on another replica. One nginx per target.
  const toOwner = await startNginx({ upstreams: [clustered.url.host] });
  const toOther = await startNginx({ upstreams: [second.url.host] });
  stops.push(toOwner.stop, toOther.stop);
  // Sampled in blocks of 100 calls per path in turn (see bench/interleaved.ts for why).
  const [owner, forwarded, proxied, ownerLb, forwardedLb] = await measureInterleaved(
    [
      () => call2025(clustered.url),
      () => call2025(second.url),
      () => call2025(bare.url),
      () => call2025(new URL(toOwner.url)),
      () => call2025(new URL(toOther.url)),
    ],
    { calls: 2000, inFlight: 8, sequential: 3000, rounds: 3 },
  );
  await toOwner.stop();
  await toOther.stop();
  agent.destroy();

  // 3. Scale through nginx.
  const third = await replica(["--cluster", redis.url, "--id", "c3"]);
  stops.push(third.stop);
  const all = [clustered, second, third];
  const scale: Array<{ n: number; rate: number; cpuPerCall: number; cores: number; proxyPerCall: number }> =
    [];
  for (const n of [1, 2, 3]) {
    const used = all.slice(0, n);
    const nginx = await startNginx({ upstreams: used.map((r) => r.url.host) });
    const runs = [];
    const proxyCpu = nginxCpu(nginx.pid);
    for (let round = 0; round < ROUNDS; round++) runs.push(await measure(new URL(nginx.url), used, proxyCpu));
    await nginx.stop();
    scale.push({
      n,
      rate: median(runs.map((r) => r.rate)),
      cpuPerCall: median(runs.map((r) => r.cpuPerCall)),
      cores: median(runs.map((r) => r.cores)),
      proxyPerCall: median(runs.map((r) => r.proxyPerCall)),
    });
  }

  // The control: one replica alone, paced at the rate each of the three served. If its CPU per
  // call rises as much, the rise comes from each replica's lighter load (fewer requests per
  // wake-up), not from anything the replicas share.
  const perReplica = scale[2]!.rate / 3;
  const alone = await startNginx({ upstreams: [clustered.url.host] });
  const controlRuns = [];
  for (let round = 0; round < ROUNDS; round++)
    controlRuns.push(await measure(new URL(alone.url), [clustered], () => 0, perReplica));
  await alone.stop();
  const control = {
    rate: median(controlRuns.map((r) => r.rate)),
    cpuPerCall: median(controlRuns.map((r) => r.cpuPerCall)),
  };

  const fmt = (n: number, d = 0) => n.toFixed(d).padStart(8);
  console.log(
    `cluster mode, ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections, echo tool in process\n`,
  );
  console.log(
    `1. own cost, server CPU per 2026 call: ${fmt(median(cost.plain))} µs without, ${fmt(median(cost.clustered))} µs with` +
      `   ratio ${(median(cost.clustered) / median(cost.plain)).toFixed(2)} (rounds ${Math.min(...ownCost).toFixed(2)}–${Math.max(...ownCost).toFixed(2)})   target <= 1.10`,
  );
  const p50 = {
    owner: owner!.p50,
    forwarded: forwarded!.p50,
    proxied: proxied!.p50,
    ownerLb: ownerLb!.p50,
    forwardedLb: forwardedLb!.p50,
  };
  console.log(
    `2. 2025 request p50, sequential calls:\n` +
      `   through nginx, as deployed: ${fmt(p50.ownerLb)} µs landing on its owner, ${fmt(p50.forwardedLb)} µs on another replica` +
      `   ratio ${(p50.forwardedLb / p50.ownerLb).toFixed(2)}   target <= 1.60\n` +
      `   straight to a replica:      ${fmt(p50.owner)} µs on its owner, ${fmt(p50.forwarded)} µs forwarded` +
      `   ratio ${(p50.forwarded / p50.owner).toFixed(2)}\n` +
      `   floor of a hop: a bare node:http proxy process ${fmt(p50.proxied)} µs, ratio ${(p50.proxied / p50.owner).toFixed(2)};` +
      ` a replica's forwarding ${p50.forwarded >= p50.proxied ? "adds" : "saves"} ${fmt(Math.abs(p50.forwarded - p50.proxied))} µs to it`,
  );
  console.log("3. through nginx round-robin (medians):");
  console.log(
    "   replicas   calls/s   per replica   replica cores used   calls/s per core   replica CPU µs/call   nginx CPU µs/call",
  );
  for (const s of scale)
    console.log(
      `   ${String(s.n).padStart(8)}  ${fmt(s.rate)}  ${fmt(s.rate / s.n)}     ${fmt(s.cores, 2)}          ${fmt(s.rate / s.cores)}       ${fmt(s.cpuPerCall)}              ${fmt(s.proxyPerCall)}`,
    );
  console.log(
    `   control: one replica alone paced at ${fmt(control.rate)} calls/s (each replica's share of the 3): replica CPU ${fmt(control.cpuPerCall)} µs/call`,
  );
} finally {
  for (const stop of stops.reverse()) await stop();
}
