import { Agent } from "node:http";
import { post, REV2026_ECHO_HEADERS, REV2026_META } from "./http-post.js";
import { median } from "./interleaved.js";
import { cpuSeconds, listening, numberArg } from "./process-stats.js";

const ROUNDS = numberArg("--rounds", 6);
const SECONDS = numberArg("--seconds", 1.5);
const CONNECTIONS = 64;
const META = REV2026_META;
const HEADERS = REV2026_ECHO_HEADERS;

interface Target {
  url: string;
  stop: () => void;
  /** CPU seconds the target process has used so far (Linux /proc), or undefined elsewhere. */
  cpu: () => number | undefined;
}

async function start(kind: string): Promise<Target> {
  const target = new URL("./http-target.ts", import.meta.url).pathname;
  const { url, child } = await listening(["--import", "tsx", target, ...kind.split(" ")], `${kind} target`);
  const cpu = () => {
    try {
      return cpuSeconds(child.pid!);
    } catch {
      return undefined;
    }
  };
  return { url: url.href, stop: () => child.kill(), cpu };
}

async function call(agent: Agent, url: URL, id: number): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { _meta: META, name: "echo", arguments: { message: "hi" } },
  });
  const text = await post(agent, url, body, HEADERS);
  if (!text.includes('"hi"')) throw new Error(`no echo in ${text.slice(0, 200)}`);
}

/** Keeps 64 calls in flight for {@link SECONDS}; calls per second. */
async function load(agent: Agent, url: URL): Promise<number> {
  let done = 0;
  let id = 1000;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        await call(agent, url, id++);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

const TARGETS = [
  { kind: "bare", label: "bare node:http JSON echo" },
  { kind: "sdk", label: "SDK v2 createMcpHandler" },
  { kind: "mcplex", label: "mcplex gateway front" },
  { kind: "mcplex --no-dashboard", label: "mcplex, dashboard off" },
] as const;
type Kind = (typeof TARGETS)[number]["kind"];

const running = await Promise.all(TARGETS.map((t) => start(t.kind)));
const rates = new Map<Kind, number[]>(TARGETS.map((t) => [t.kind, []]));
/** Target-process CPU µs per call, per round: what a call costs the server, whatever the load generator. */
const costs = new Map<Kind, number[]>(TARGETS.map((t) => [t.kind, []]));
try {
  const clients = TARGETS.map((t, i) => ({
    kind: t.kind,
    target: running[i]!,
    url: new URL(running[i]!.url),
    agent: new Agent({ keepAlive: true, maxSockets: CONNECTIONS }),
  }));
  for (const c of clients) for (let i = 0; i < 500; i++) await call(c.agent, c.url, i); // warm up
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < clients.length; k++) {
      const c = clients[(round + k) % clients.length]!;
      const before = c.target.cpu();
      const rate = await load(c.agent, c.url);
      const after = c.target.cpu();
      rates.get(c.kind)!.push(rate);
      if (before !== undefined && after !== undefined)
        costs.get(c.kind)!.push(((after - before) * 1e6) / (rate * SECONDS));
    }
  }
  for (const c of clients) c.agent.destroy();
} finally {
  for (const target of running) target.stop();
}

const fmt = (n: number) => n.toFixed(0).padStart(8);
const perRound = (a: Kind, b: Kind) => rates.get(a)!.map((rate, i) => rate / rates.get(b)![i]!);
const ratio = (a: Kind, b: Kind) => {
  const each = perRound(a, b);
  return `${median(each).toFixed(2)}   (rounds ${Math.min(...each).toFixed(2)}–${Math.max(...each).toFixed(2)})`;
};
console.log(
  `2026 stateless tools/call, JSON answers, ${CONNECTIONS} keep-alive connections, ${ROUNDS} rounds of ${SECONDS} s per target\n`,
);
const hasCosts = costs.get("bare")!.length === ROUNDS;
for (const t of TARGETS) {
  const cost = hasCosts ? `   ${median(costs.get(t.kind)!).toFixed(0).padStart(5)} µs CPU/call` : "";
  console.log(`${t.label.padEnd(27)}${fmt(median(rates.get(t.kind)!))} calls/s${cost}   (medians)`);
}
console.log("");
console.log(`mcplex / SDK    ${ratio("mcplex", "sdk")}   target >= 5`);
console.log(`mcplex / bare   ${ratio("mcplex", "bare")}   target >= 0.50`);
console.log(`dashboard on / off   ${ratio("mcplex", "mcplex --no-dashboard")}   (its cost: 1.00 is none)`);
if (hasCosts) {
  // The same comparison by server CPU per call: steadier than calls/s on a shared machine,
  // since the load generator's share of the cores drops out.
  const cheaper = (a: Kind, b: Kind) => median(costs.get(b)!) / median(costs.get(a)!);
  console.log("\nby server CPU per call (how many mcplex calls for one of the other):");
  console.log(`mcplex vs SDK    ${cheaper("mcplex", "sdk").toFixed(2)}`);
  console.log(`mcplex vs bare   ${cheaper("mcplex", "bare").toFixed(2)}`);
}
