/**
 * What sign-in costs per call: 2026 stateless `tools/call`s of an echo tool over HTTP, 64
 * keep-alive connections, to one gateway process (bench/sign-in-target.ts) through two fronts:
 * one admitting a static token (`tokens:`), one admitting a signed-in user's JWT access token
 * (`auth:`, verified once and then found by its hash). The fronts take turns in rounds (the
 * order alternating); each round's figure is the target process's CPU per call (from /proc),
 * and the ratio is the median of the per-round ratios. Then, in the target, the CPU of the first
 * check of tokens never seen (one signature verification each) against cached checks.
 *
 *   npm run build && npx tsx bench/sign-in-bench.ts [--rounds R] [--seconds S] [--fresh N]
 */
import { spawn } from "node:child_process";
import { Agent } from "node:http";
import { createInterface } from "node:readline";
import { post, REV2026_ECHO_HEADERS, REV2026_META } from "./http-post.js";
import { median } from "./interleaved.js";
import { cpuSeconds, numberArg } from "./process-stats.js";

const ROUNDS = numberArg("--rounds", 8);
const SECONDS = numberArg("--seconds", 1.5);
const FRESH = numberArg("--fresh", 500);
const CONNECTIONS = 64;
const STATIC_TOKEN = "bench-static-token-0123456789abcdef";

const child = spawn(
  process.execPath,
  ["--import", "tsx", new URL("./sign-in-target.ts", import.meta.url).pathname],
  {
    stdio: ["pipe", "pipe", "inherit"],
  },
);
const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
const next = async (word: string): Promise<string> => {
  const { value, done } = await lines.next();
  if (done === true || !String(value).startsWith(`${word} `))
    throw new Error(`expected "${word}", got ${value}`);
  return String(value).slice(word.length + 1);
};
const staticUrl = new URL(await next("static"));
const oauthUrl = new URL(await next("oauth"));
const jwt = await next("token");

const targets = [
  { label: "static token", url: staticUrl, token: STATIC_TOKEN },
  { label: "signed-in user", url: oauthUrl, token: jwt },
].map((t) => ({
  ...t,
  agent: new Agent({ keepAlive: true, maxSockets: CONNECTIONS }),
  costs: [] as number[],
  headers: { ...REV2026_ECHO_HEADERS, authorization: `Bearer ${t.token}` },
}));

async function call(target: (typeof targets)[number], id: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { _meta: REV2026_META, name: "echo", arguments: { message: "hi" } },
  });
  const text = await post(target.agent, target.url, body, target.headers);
  if (!text.includes('"hi"')) throw new Error(`no echo in ${text.slice(0, 200)}`);
}

/** Keeps 64 calls in flight for SECONDS; the calls made. */
async function load(target: (typeof targets)[number]): Promise<number> {
  let done = 0;
  let id = 0;
  const deadline = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await call(target, id++);
        done++;
      }
    }),
  );
  return done;
}

try {
  for (const target of targets) for (let i = 0; i < 2000; i++) await call(target, i); // warm up
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(round + k) % targets.length]!;
      const before = cpuSeconds(child.pid!);
      const calls = await load(target);
      target.costs.push(((cpuSeconds(child.pid!) - before) * 1e6) / calls);
    }
  }
  child.stdin!.write(`fresh ${FRESH}\n`);
  const [first, cached] = (await next("verify")).split(" ").map(Number) as [number, number];
  const [plain, signed] = targets;
  const ratios = signed!.costs.map((cost, i) => cost / plain!.costs[i]!);
  console.log(
    `2026 stateless tools/call over HTTP, ${CONNECTIONS} keep-alive connections, ${ROUNDS} rounds of ${SECONDS} s per front`,
  );
  for (const t of targets)
    console.log(
      `  ${t.label.padEnd(16)} ${median(t.costs).toFixed(1).padStart(7)} µs of gateway CPU per call (median)`,
    );
  console.log(
    `  signed-in / static  ${median(ratios).toFixed(3)}  (rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})   target <= 1.15`,
  );
  console.log(
    `first check of a new token (ES256 signature, claims, rules): ${first.toFixed(1)} µs of CPU; a cached one: ${cached.toFixed(1)} µs (${FRESH} tokens)`,
  );
} finally {
  for (const t of targets) t.agent.destroy();
  child.kill();
}
