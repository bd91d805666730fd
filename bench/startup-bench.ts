/**
 * Start-up as a client that spawns its server per session feels it: the time from spawn to
 * the answer of the first `tools/list` (after `initialize`), for
 *   (a) an echo server spawned directly (the baseline),
 *   (b) `mcplex serve --stdio` with that echo server as its one upstream,
 *   (c) bench/relay.mjs copying bytes to that echo server (the floor of any process between),
 * what (b) and (c) add to (a), the CPU time each process used until the answer (its own, not its
 * server's: the sum of its threads' schedstat, which the machine's load does not stretch), and
 * the idle RSS of (b) once it has answered (VmRSS from /proc).
 * The echo server is the official SDK v2 McpServer (bench/sdk-echo-server.mjs), a server as
 * most TypeScript MCP servers are written; `--lean` uses bench/echo-server.mjs instead, a
 * hand-written one that starts as fast as node does, which leaves mcplex's own start-up
 * nothing to hide behind.
 *
 * The three take turns in rounds (the order rotating each round); the ratios are medians of
 * the per-round ratios, so that a slow moment of a shared machine lands on all three alike.
 *
 *   npm run build && npx tsx bench/startup-bench.ts [--rounds R] [--lean]
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { median } from "./interleaved.js";

const at = process.argv.indexOf("--rounds");
const ROUNDS = at === -1 ? 15 : Number(process.argv[at + 1]);
if (!(ROUNDS > 0)) throw new Error("--rounds wants a positive number");

const ECHO = new URL(
  process.argv.includes("--lean") ? "./echo-server.mjs" : "./sdk-echo-server.mjs",
  import.meta.url,
).pathname;
const RELAY = new URL("./relay.mjs", import.meta.url).pathname;
const CLI = new URL("../dist/bin/mcplex.js", import.meta.url).pathname;

const HANDSHAKE = `${[
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
]
  .map((m) => JSON.stringify(m))
  .join("\n")}\n`;

interface Start {
  ms: number;
  /** CPU time of the process itself (all its threads) until the list's answer, in ms. */
  cpuMs: number;
  /** VmRSS in MB once the first list is answered, read after the process has gone idle. */
  rssMb: number;
}

/** CPU time a process has used, in ms: its threads' time on a CPU (schedstat, in ns). */
function cpuMsOf(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** Spawns `args`, sends the handshake and the first list at once, times the list's answer. */
async function firstList(args: string[]): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  child.stdin.write(HANDSHAKE);
  let cpuMs = 0;
  const ms = await new Promise<number>((resolve, reject) => {
    let text = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      // Lines as they come (servers order their keys differently): the list's answer ends it.
      for (const line of text.split("\n").slice(0, -1)) {
        const m = JSON.parse(line) as { id?: unknown; result?: { tools?: unknown[] } };
        if (m.id === 2 && (m.result?.tools?.length ?? 0) > 0) {
          resolve(performance.now() - started);
          cpuMs = cpuMsOf(child.pid!);
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}: ${text}`)));
  });
  // Idle: let whatever start-up work is left run before reading the resident set.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const rssMb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin.end();
  await exited;
  return { ms, cpuMs, rssMb };
}

const dir = await mkdtemp(join(tmpdir(), "mcplex-startup-"));
const config = join(dir, "mcplex.yaml");
await writeFile(config, `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${ECHO}]\n`);
const targets = {
  direct: [ECHO],
  mcplex: [CLI, "serve", "--stdio", "--config", config],
  relay: [RELAY, process.execPath, ECHO],
} as const;
type Name = keyof typeof targets;
const names = Object.keys(targets) as Name[];
const runs: Record<Name, Start[]> = { direct: [], mcplex: [], relay: [] };

// One unmeasured round: the first spawn of each pays for a cold page cache.
for (const name of names) await firstList([...targets[name]]);
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length]!;
    runs[name].push(await firstList([...targets[name]]));
  }
}
await rm(dir, { recursive: true, force: true });

const ms = (name: Name) => runs[name].map((r) => r.ms);
const range = (values: number[]) => `${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}`;
const ratios = (name: Name) => runs[name].map((r, i) => r.ms / runs.direct[i]!.ms);
console.log(`first tools/list after spawn, ${ROUNDS} rounds (median, range):`);
for (const name of names) {
  const ratio = name === "direct" ? "" : `   ${median(ratios(name)).toFixed(2)}x direct`;
  console.log(
    `  ${name.padEnd(7)} ${median(ms(name)).toFixed(0).padStart(5)} ms  (${range(ms(name))})${ratio}`,
  );
}
// What each process between adds to the server alone, per round: mcplex's own start against the
// least any process between costs (a node process that copies bytes). A ratio of the median
// differences, since one round's relay difference can be near zero on a noisy machine.
const added = (name: Name) => median(runs[name].map((r, i) => r.ms - runs.direct[i]!.ms));
console.log(
  `added to the server alone (median of per-round differences): mcplex ${added("mcplex").toFixed(0)} ms, relay ${added("relay").toFixed(0)} ms: mcplex adds ${(added("mcplex") / added("relay")).toFixed(2)}x what the relay adds`,
);
const cpu = (name: Name) => median(runs[name].map((r) => r.cpuMs));
console.log(
  `CPU until the answer (the process's own, median): direct ${cpu("direct").toFixed(0)} ms, mcplex ${cpu("mcplex").toFixed(0)} ms, relay ${cpu("relay").toFixed(0)} ms: mcplex uses ${(cpu("mcplex") / cpu("relay")).toFixed(2)}x the relay's`,
);
const rss = runs.mcplex.map((r) => r.rssMb);
console.log(`mcplex idle RSS after the first list: ${median(rss).toFixed(1)} MB (${range(rss)})`);
