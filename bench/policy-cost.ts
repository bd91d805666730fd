import { Agent } from "node:http";
import { post, REV2026_ECHO_HEADERS, REV2026_META } from "./http-post.js";
import { median } from "./interleaved.js";
import { cpuSeconds, listening, numberArg } from "./process-stats.js";

const ROUNDS = numberArg("--rounds", 5);
const SECONDS = numberArg("--seconds", 1.5);
const CONNECTIONS = numberArg("--connections", 64);
const HEADERS = { ...REV2026_ECHO_HEADERS, "mcp-name": "echo__echo" };
/** 1 MB of text that looks like a log: words, numbers, no credential and no personal data. */
const MEGABYTE = "line 42: request served in 12 ms by worker seven; cache warm. "
  .repeat(16_500)
  .slice(0, 1_000_000);

interface Target {
  kind: string;
  url: URL;
  agent: Agent;
  cpu: () => number;
  stop: () => void;
}

async function start(kind: string): Promise<Target> {
  const target = new URL("./policy-target.ts", import.meta.url).pathname;
  const { url, child } = await listening(["--import", "tsx", target, kind], `${kind} target`);
  return {
    kind,
    url,
    agent: new Agent({ keepAlive: true, maxSockets: CONNECTIONS }),
    cpu: () => cpuSeconds(child.pid!),
    stop: () => child.kill(),
  };
}

let ids = 0;
async function call(t: Target, message: string): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: ids++,
    method: "tools/call",
    params: { _meta: REV2026_META, name: "echo__echo", arguments: { message } },
  });
  const text = await post(t.agent, t.url, body, HEADERS);
  if (!text.includes(message.slice(0, 20))) throw new Error(`no echo in ${text.slice(0, 200)}`);
}

/** Calls per second and target CPU µs per call, for `seconds` with `connections` in flight. */
async function load(
  t: Target,
  message: string,
  connections: number,
  seconds: number,
): Promise<[number, number]> {
  let done = 0;
  const before = t.cpu();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        await call(t, message);
        done++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return [done / elapsed, ((t.cpu() - before) * 1e6) / done];
}

const targets = [await start("none"), await start("rules")];
const small = new Map<string, Array<[number, number]>>(targets.map((t) => [t.kind, []]));
const large = new Map<string, Array<[number, number]>>(targets.map((t) => [t.kind, []]));
try {
  for (const t of targets) {
    for (let i = 0; i < 300; i++) await call(t, "hi"); // warm up (the rule set loads with the first)
    await call(t, MEGABYTE);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(round + k) % targets.length]!;
      small.get(t.kind)!.push(await load(t, "hi", CONNECTIONS, SECONDS));
      large.get(t.kind)!.push(await load(t, MEGABYTE, 1, SECONDS * 2));
    }
  }
} finally {
  for (const t of targets) {
    t.agent.destroy();
    t.stop();
  }
}

const med = (rows: Array<[number, number]>, i: 0 | 1) => median(rows.map((r) => r[i]));
console.log(
  `2026 tools/call through serve --http, ${ROUNDS} rounds; target-process CPU per call (medians)\n`,
);
for (const [label, runs] of [
  [`short message, ${CONNECTIONS} connections`, small],
  ["1 MB message, one at a time", large],
] as const) {
  console.log(label);
  for (const t of targets) {
    const rows = runs.get(t.kind)!;
    console.log(
      `  ${t.kind === "none" ? "nothing configured          " : "5 rules + secrets + pii     "}` +
        `${med(rows, 0).toFixed(0).padStart(7)} calls/s ${med(rows, 1).toFixed(0).padStart(9)} µs CPU/call`,
    );
  }
  const each = runs.get("rules")!.map((r, i) => r[1] / runs.get("none")![i]![1]);
  console.log(
    `  CPU per call, rules / none: ${median(each).toFixed(2)}   (rounds ${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)})\n`,
  );
}
