/**
 * The replica link (src/cluster/replica-link.ts) against the clients it could be, in one run:
 * each forwards what a replica forwards (a 2025 JSON-RPC POST with its session headers, its
 * answer an event stream) to the same owner process (bench/sse-owner.mjs, a node:http server)
 * over kept-alive loopback connections:
 *   - floor: a raw socket that writes the request's bytes and waits for the last chunk's, no
 *     parsing at all: what any HTTP client costs at least;
 *   - ours: ReplicaLink;
 *   - undici: `Pool.dispatch` (test/support/undici-link.ts);
 *   - node:http: `request` with a keep-alive Agent (test/support/node-http-link.ts).
 * The three clients are driven through the same `send(origin, request, handler)` interface.
 * Rounds interleave the paths (sequential calls in blocks of 100 per path in turn, then a
 * throughput block per path, in an order that turns each round), so a slow moment of a shared
 * machine hits them alike; each round gives a ratio per path, and the spread of those ratios
 * over the rounds is the noise a difference must clear.
 *
 * Figures: p50 and p99 of sequential calls (µs), and the bench process's CPU per request, one
 * at a time and with `--in-flight` requests in flight (µs; the owner's work is the same for
 * every path and runs elsewhere), each as a ratio against the floor.
 *
 * calls/s with IN_FLIGHT in flight is printed too, but on a shared machine it moves with other
 * processes' scheduling far more than with the client; figures in docs/cluster-scaling.md.
 *
 *   npm run bench:link      (or: npm run build && npx tsx bench/replica-link-bench.ts
 *                            [--rounds R] [--sequential N] [--calls N] [--in-flight N])
 */
import type { ChildProcess } from "node:child_process";
import { connect, type Socket } from "node:net";
// From dist/, as it ships: run through tsx, its closures would each pay a naming helper call.
import { type LinkHandler, type LinkRequest, ReplicaLink } from "../dist/cluster/replica-link.js";
import { NodeHttpLink } from "../test/support/node-http-link.js";
import { UndiciLink } from "../test/support/undici-link.js";
import { median } from "./interleaved.js";
import { cpuSeconds, listening, numberArg } from "./process-stats.js";

const ROUNDS = numberArg("--rounds", 7);
const SEQUENTIAL = numberArg("--sequential", 1000);
const CALLS = numberArg("--calls", 5000);
const IN_FLIGHT = numberArg("--in-flight", 8);
const BLOCK = 100;
const WARM_UP = 10_000;

type Call = () => Promise<string>;

/** Starts bench/sse-owner.mjs; resolves with its origin and process. */
async function startOwner(): Promise<{ url: URL; child: ChildProcess }> {
  return listening([new URL("./sse-owner.mjs", import.meta.url).pathname], "the owner");
}

const BODY = Buffer.from(
  JSON.stringify({
    jsonrpc: "2.0",
    id: 7,
    method: "tools/call",
    params: { name: "echo", arguments: { message: "hi" } },
  }),
);
/** What a replica sends on (after dropping the hop-by-hop ones), from a real client's request. */
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-session-id": "r1.0123456789abcdef0123456789abcdef.AbCdEfGhIjKlMnOpQrStUv",
  "mcp-protocol-version": "2025-06-18",
  "user-agent": "node",
  "x-mcplex-replica": "c1.1700000000.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcd",
};

interface Link {
  send(origin: URL, request: LinkRequest, handler: LinkHandler): unknown;
}

/** A call through `link`: resolves with the answer's body once it is whole. */
function viaLink(link: Link, origin: URL): Call {
  const request: LinkRequest = { method: "POST", path: origin.pathname, headers: HEADERS, body: BODY };
  return () =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      link.send(origin, request, {
        head(status) {
          if (status !== 200) reject(new Error(`status ${status}`));
        },
        data(chunk) {
          chunks.push(chunk);
          return true;
        },
        end() {
          resolve(Buffer.concat(chunks).toString("utf8"));
        },
        fail: reject,
      });
    });
}

const LAST_CHUNK = Buffer.from("0\r\n\r\n");

/**
 * The floor: kept raw sockets, one per request in flight; the request's bytes written in one
 * write, the answer taken as whole when its bytes end with the last chunk.
 */
function rawFloor(origin: URL): { call: Call; close: () => void } {
  let head = `POST ${origin.pathname} HTTP/1.1\r\nhost: ${origin.host}\r\n`;
  for (const [name, value] of Object.entries(HEADERS)) head += `${name}: ${value}\r\n`;
  const bytes = Buffer.concat([Buffer.from(`${head}content-length: ${BODY.length}\r\n\r\n`), BODY]);
  const free: Socket[] = [];
  const all: Socket[] = [];
  const call: Call = () =>
    new Promise((resolve, reject) => {
      let socket = free.pop();
      if (socket === undefined) {
        socket = connect({ host: origin.hostname, port: Number(origin.port), noDelay: true });
        all.push(socket);
      }
      const chunks: Buffer[] = [];
      const taken = socket;
      // A method, not an arrow function assigned to a name: see test/support/undici-link.ts.
      const on = {
        data(chunk: Buffer) {
          chunks.push(chunk);
          const tail = chunk.length >= LAST_CHUNK.length ? chunk : Buffer.concat(chunks);
          if (!tail.subarray(tail.length - LAST_CHUNK.length).equals(LAST_CHUNK)) return;
          taken.off("data", on.data);
          taken.off("error", reject);
          free.push(taken);
          resolve(Buffer.concat(chunks).toString("latin1"));
        },
      };
      taken.on("data", on.data);
      taken.once("error", reject);
      taken.write(bytes);
    });
  return {
    call,
    close: () => {
      for (const socket of all) socket.destroy();
    },
  };
}

/** Makes `calls` calls with IN_FLIGHT of them in flight at any time. */
async function inParallel(call: Call, calls: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < calls) await call();
    }),
  );
}

/** The value below which `share` of `values` fall. */
function quantile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

interface Round {
  p50: number;
  p99: number;
  /** The bench process's CPU per request, µs: with IN_FLIGHT in flight, and sequential. */
  cpu: number;
  cpuSequential: number;
  /** The owner's CPU per request, µs (the same work for every path: a check, not a figure). */
  ownerCpu: number;
  rate: number;
}

const owner = await startOwner();
const origin = owner.url;
const floor = rawFloor(origin);
const ours = new ReplicaLink();
const undici = new UndiciLink({ connections: IN_FLIGHT });
const nodeHttp = new NodeHttpLink({ connections: IN_FLIGHT });
const paths: Array<{ name: string; call: Call }> = [
  { name: "floor (raw socket)", call: floor.call },
  { name: "ours (ReplicaLink)", call: viaLink(ours, origin) },
  { name: "undici Pool.dispatch", call: viaLink(undici, origin) },
  { name: "node:http keep-alive", call: viaLink(nodeHttp, origin) },
];
try {
  // Every path reads the same answer; the floor reads it raw, framing included.
  const expected = await paths[1]!.call();
  for (const path of paths.slice(2))
    if ((await path.call()) !== expected) throw new Error(`${path.name} read another answer`);
  if (!(await floor.call()).includes(expected)) throw new Error("the floor read another answer");

  // To steady state first (see bench/interleaved.ts: the first thousands of calls run in the
  // interpreter).
  for (const path of paths) {
    await inParallel(path.call, WARM_UP);
    for (let i = 0; i < 1000; i++) await path.call();
  }

  const rounds: Round[][] = paths.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    const latencies: number[][] = paths.map(() => []);
    const sequentialCpu = paths.map(() => 0);
    for (let done = 0; done < SEQUENTIAL; done += BLOCK)
      for (let p = 0; p < paths.length; p++) {
        const call = paths[p]!.call;
        const before = process.cpuUsage();
        for (let i = 0; i < Math.min(BLOCK, SEQUENTIAL - done); i++) {
          const t = performance.now();
          await call();
          latencies[p]!.push((performance.now() - t) * 1000);
        }
        const used = process.cpuUsage(before);
        sequentialCpu[p]! += used.user + used.system;
      }
    const order = paths.map((_, p) => (p + r) % paths.length);
    const cpus: Array<{ cpu: number; ownerCpu: number; rate: number }> = [];
    for (const p of order) {
      const ownerBefore = cpuSeconds(owner.child.pid!);
      const before = process.cpuUsage();
      const start = performance.now();
      await inParallel(paths[p]!.call, CALLS);
      const wall = performance.now() - start;
      const used = process.cpuUsage(before);
      cpus[p] = {
        cpu: (used.user + used.system) / CALLS,
        ownerCpu: ((cpuSeconds(owner.child.pid!) - ownerBefore) * 1e6) / CALLS,
        rate: CALLS / (wall / 1000),
      };
    }
    for (let p = 0; p < paths.length; p++)
      rounds[p]!.push({
        p50: median(latencies[p]!),
        p99: quantile(latencies[p]!, 0.99),
        cpuSequential: sequentialCpu[p]! / SEQUENTIAL,
        ...cpus[p]!,
      });
  }

  const fmt = (n: number, d = 0) => n.toFixed(d).padStart(7);
  const figure = (p: number, key: keyof Round) => median(rounds[p]!.map((round) => round[key]));
  /** Per-round ratios of path `p` to path `base`: median and range. */
  const ratio = (p: number, base: number, key: keyof Round) => {
    const each = rounds[p]!.map((round, r) => round[key] / rounds[base]![r]![key]);
    return { median: median(each), low: Math.min(...each), high: Math.max(...each) };
  };
  const show = (q: { median: number; low: number; high: number }) =>
    `${q.median.toFixed(2)} (${q.low.toFixed(2)}–${q.high.toFixed(2)})`.padEnd(18);
  console.log(
    `replica link: POST with an event-stream answer to a node:http owner on loopback; ${ROUNDS} rounds of ` +
      `${SEQUENTIAL} sequential calls and ${CALLS} calls ${IN_FLIGHT} in flight per path; medians over rounds, ` +
      `ratios to the floor as median (min–max) of the rounds\n`,
  );
  console.log(
    `${"path".padEnd(22)} ${"p50 µs".padStart(7)} ${"p99 µs".padStart(7)} ${"CPU µs/req".padStart(10)} ${"seq. CPU".padStart(8)} ${"calls/s".padStart(7)}   ` +
      `${"p50 / floor".padEnd(18)} ${"p99 / floor".padEnd(18)} ${"CPU / floor".padEnd(18)} ${"seq. CPU / floor".padEnd(18)} owner CPU µs/req`,
  );
  for (let p = 0; p < paths.length; p++)
    console.log(
      `${paths[p]!.name.padEnd(22)} ${fmt(figure(p, "p50"))} ${fmt(figure(p, "p99"))} ${fmt(figure(p, "cpu"), 1).padStart(10)} ${fmt(figure(p, "cpuSequential"), 1).padStart(8)} ${fmt(figure(p, "rate"))}   ` +
        `${show(ratio(p, 0, "p50"))} ${show(ratio(p, 0, "p99"))} ${show(ratio(p, 0, "cpu"))} ${show(ratio(p, 0, "cpuSequential"))} ${fmt(figure(p, "ownerCpu"), 1)}`,
    );
  console.log("\nagainst ours, per round (median (min–max)); above 1 means slower or costlier than ours:");
  for (let p = 2; p < paths.length; p++)
    console.log(
      `${paths[p]!.name.padEnd(22)} p50 ${show(ratio(p, 1, "p50"))} p99 ${show(ratio(p, 1, "p99"))} CPU ${show(ratio(p, 1, "cpu"))} seq. CPU ${show(ratio(p, 1, "cpuSequential"))}`,
    );
} finally {
  floor.close();
  ours.close();
  await undici.close();
  nodeHttp.close();
  owner.child.kill();
}
