/**
 * Gateway hop over stdio: a client calling an echo tool through `mcplex serve --stdio`
 * (in front of the echo server) against the same client calling the echo server
 * directly. Prints ratios measured in one run.
 *
 * The issue's targets are read against the direct SDK path: the official SDK v2 Client
 * calling an echo tool served by the SDK v2 McpServer (bench/sdk-echo-server.mjs), client
 * and server as most TypeScript MCP code is written, and the baseline the project's
 * benchmarks are asked to print. Two stricter readings follow. The SDK Client in front of a
 * lean echo server (bench/echo-server.mjs) leaves only the client's own work to hide the
 * hop. A lean newline-JSON client with that server shows the processes' own cost; for it
 * the floor is what any process in the middle costs, measured with two relays
 * (bench/relay.mjs): one that copies bytes and one that parses and writes back every
 * message. On all cores the byte relay alone is about 4x direct, so the lean rows are
 * compared with the relays.
 *
 * Runs twice: on all cores, then pinned to one core; `--all-cores-only` skips the second run.
 *
 *   npm run build && npx tsx bench/gateway-stdio-bench.ts [--calls N] [--all-cores-only]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { alsoOnOneCore, coresLabel, type Measured, measureInterleaved } from "./interleaved.js";

const ECHO = new URL("./echo-server.mjs", import.meta.url).pathname;
const SDK_ECHO = new URL("./sdk-echo-server.mjs", import.meta.url).pathname;
const CLI = new URL("../dist/bin/mcplex.js", import.meta.url).pathname;
const argCalls = process.argv.indexOf("--calls");
const CALLS = argCalls === -1 ? 20_000 : Number(process.argv[argCalls + 1]);
const SEQUENTIAL = 2_000;
const IN_FLIGHT = 64;

interface Pipe {
  request(method: string, params: unknown): Promise<unknown>;
  child: ChildProcess;
}

/** Newline JSON over a child's stdio, answers matched by id. */
function pipe(command: string, args: string[]): Pipe {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
  const pending = new Map<number, (v: unknown) => void>();
  let buffer = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const m = JSON.parse(buffer.slice(start, nl)) as { id?: number; result?: unknown; error?: unknown };
      start = nl + 1;
      if (m.id === undefined) continue;
      pending.get(m.id)?.(m.result ?? m.error);
      pending.delete(m.id);
    }
    buffer = buffer.slice(start);
  });
  let id = 0;
  return {
    child,
    request: (method, params) =>
      new Promise((resolve) => {
        const n = ++id;
        pending.set(n, resolve);
        child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
      }),
  };
}

async function ready(p: Pipe, tool: string): Promise<() => Promise<unknown>> {
  await p.request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "bench", version: "1" },
  });
  if (tool !== "echo") await p.request("tools/list", {}); // waits for the gateway's upstreams
  return () => p.request("tools/call", { name: tool, arguments: { message: "hi" } });
}

const dir = await mkdtemp(join(tmpdir(), "mcplex-bench-"));
const config = join(dir, "mcplex.yaml");
await writeFile(config, `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${ECHO}]\n`);
const sdkConfig = join(dir, "mcplex-sdk.yaml");
await writeFile(sdkConfig, `servers:\n  echo:\n    command: ${process.execPath}\n    args: [${SDK_ECHO}]\n`);
const RELAY = new URL("./relay.mjs", import.meta.url).pathname;
const pipes = [
  pipe(process.execPath, [ECHO]),
  pipe(process.execPath, [RELAY, process.execPath, ECHO]),
  pipe(process.execPath, [RELAY, "--json", process.execPath, ECHO]),
  pipe(process.execPath, [CLI, "serve", "--stdio", "--config", config]),
];
const tools = ["echo", "echo", "echo", "echo__echo"];
const paths = await Promise.all(pipes.map((p, i) => ready(p, tools[i]!)));

/** The official SDK v2 Client, as Claude Code and most MCP clients are built. */
async function sdkClient(command: string, args: string[], tool: string) {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command, args }));
  return { client, call: () => client.callTool({ name: tool, arguments: { message: "hi" } }) };
}
const sdkDirect = await sdkClient(process.execPath, [ECHO], "echo");
const sdkHop = await sdkClient(process.execPath, [CLI, "serve", "--stdio", "--config", config], "echo__echo");
const sdkBoth = await sdkClient(process.execPath, [SDK_ECHO], "echo");
const sdkBothHop = await sdkClient(
  process.execPath,
  [CLI, "serve", "--stdio", "--config", sdkConfig],
  "echo__echo",
);
const sdks = [sdkDirect, sdkHop, sdkBoth, sdkBothHop];
const [direct, relay, jsonRelay, hop, sdkDirectResult, sdkHopResult, sdkBothResult, sdkBothHopResult] =
  (await measureInterleaved([...paths, ...sdks.map((s) => s.call)], {
    calls: CALLS,
    inFlight: IN_FLIGHT,
    sequential: SEQUENTIAL,
  })) as Measured[] as [Measured, Measured, Measured, Measured, Measured, Measured, Measured, Measured];
for (const p of pipes) p.child.stdin!.end();
for (const s of sdks) await s.client.close();
await rm(dir, { recursive: true, force: true });

const fmt = (n: number) => n.toFixed(0).padStart(9);
console.log(
  `echo tool, ${coresLabel}: ${CALLS} calls with ${IN_FLIGHT} in flight (median of 3 alternating rounds); p50 of ${SEQUENTIAL} sequential calls (alternating blocks)\n`,
);
console.log(`${"".padEnd(38)} ${"calls/s".padStart(9)} ${"p50 µs".padStart(9)}`);
const line = (label: string, m: Measured) =>
  console.log(`${label.padEnd(38)} ${fmt(m.callsPerSecond)} ${fmt(m.p50)}`);
line("lean client → echo server", direct);
line("lean client → byte relay → echo", relay);
line("lean client → JSON relay → echo", jsonRelay);
line("lean client → mcplex → echo", hop);
line("SDK v2 Client → echo server", sdkDirectResult);
line("SDK v2 Client → mcplex → echo", sdkHopResult);
line("SDK v2 Client → SDK v2 echo server", sdkBothResult);
line("SDK v2 Client → mcplex → SDK v2 echo", sdkBothHopResult);
console.log("");
const row = (label: string, value: number, note: string) =>
  console.log(`${label.padEnd(52)} ${value.toFixed(2).padStart(6)}   (${note})`);
/** p50 and throughput of `path` against `base`. */
const ratios = (what: string, path: Measured, base: Measured, p50Note: string, rateNote: string) => {
  row(`p50 ${what}`, path.p50 / base.p50, p50Note);
  row(`throughput ${what}`, path.callsPerSecond / base.callsPerSecond, rateNote);
};
console.log("The issue's targets, against the direct SDK path (SDK v2 Client → SDK v2 McpServer echo):");
ratios("through mcplex / direct", sdkBothHopResult, sdkBothResult, "target <= 2.5", "target >= 0.40");
console.log("\nStricter: the SDK v2 Client in front of the lean echo server:");
ratios("through mcplex / direct", sdkHopResult, sdkDirectResult, "only the client's work", "ditto");
console.log("\nLean newline-JSON client: the processes' own cost, against what any middle process costs:");
ratios("through mcplex / direct", hop, direct, "JSON relay floor below", "JSON relay floor below");
ratios("through the byte relay / direct", relay, direct, "floor: copies bytes", "floor: copies bytes");
ratios("through the JSON relay / direct", jsonRelay, direct, "floor: parses and writes", "ditto");
ratios("through mcplex / JSON relay", hop, jsonRelay, "mcplex's own cost", "mcplex's own cost");
console.log("");
alsoOnOneCore();
