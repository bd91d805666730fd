/**
 * Hub benchmark: mcplex `callTool` against the official SDK v2 `Client` and a raw
 * newline-JSON pipe, all on the same minimal echo server, in one run. Prints ratios;
 * absolute numbers on shared machines are noise.
 *
 * Runs twice: on all cores, then pinned to one core (the setting of the reference
 * figures); `--all-cores-only` skips the second run.
 *
 *   npx tsx bench/hub-bench.ts [--calls N] [--all-cores-only]
 */
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { ServerConfig } from "../src/config/types.js";
import { Hub } from "../src/hub/hub.js";
import {
  alsoOnOneCore,
  type Call,
  coresLabel,
  measureInterleaved,
  type Measured as Result,
} from "./interleaved.js";

const ECHO = new URL("./echo-server.mjs", import.meta.url).pathname;
const argCalls = process.argv.indexOf("--calls");
const CALLS = argCalls === -1 ? 20_000 : Number(process.argv[argCalls + 1]);
const SEQUENTIAL = 2_000;
const IN_FLIGHT = 64;

/** The floor: newline JSON straight into the server's stdin, answers matched by id. */
async function rawPipe(): Promise<{ call: Call; close: () => void }> {
  const child = spawn(process.execPath, [ECHO], { stdio: ["pipe", "pipe", "inherit"] });
  const pending = new Map<number, (v: unknown) => void>();
  // As lean as a client can be: split on newlines, parse, resolve by id.
  let buffer = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let start = 0;
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", start)) {
      const m = JSON.parse(buffer.slice(start, nl)) as { id: number; result: unknown };
      start = nl + 1;
      pending.get(m.id)?.(m.result);
      pending.delete(m.id);
    }
    buffer = buffer.slice(start);
  });
  let id = 0;
  const request = (method: string, params: unknown) =>
    new Promise((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
    });
  await request("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  });
  return {
    call: () => request("tools/call", { name: "echo", arguments: { message: "hi" } }),
    close: () => child.stdin.end(),
  };
}

async function sdkClient(): Promise<{ call: Call; close: () => Promise<void> }> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [ECHO] }));
  return {
    call: () => client.callTool({ name: "echo", arguments: { message: "hi" } }),
    close: () => client.close(),
  };
}

function echoServer(name: string, args: string[] = []): ServerConfig {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [ECHO, ...args],
    env: {},
    enabled: true,
    timeout: 60_000,
    startTimeout: 60_000,
    lazy: false,
    tools: {},
  };
}

function configOf(servers: ServerConfig[]) {
  return { source: "bench", format: "mcplex" as const, servers, profiles: {}, tokens: [], secrets: [] };
}

async function mcplexHub(): Promise<{ call: Call; close: () => Promise<void> }> {
  const hub = new Hub({ config: configOf([echoServer("echo")]) });
  await hub.start();
  return { call: () => hub.callTool("echo__echo", { message: "hi" }), close: () => hub.close() };
}

async function timeStart(servers: ServerConfig[]): Promise<number> {
  const hub = new Hub({ config: configOf(servers) });
  const t = performance.now();
  await hub.start();
  const ms = performance.now() - t;
  if (hub.servers().some((s) => s.state !== "ready")) throw new Error("a bench server failed to start");
  await hub.close();
  return ms;
}

const raw = await rawPipe();
const sdk = await sdkClient();
const hub = await mcplexHub();
const [floor, sdkResult, hubResult] = (await measureInterleaved([raw.call, sdk.call, hub.call], {
  calls: CALLS,
  inFlight: IN_FLIGHT,
  sequential: SEQUENTIAL,
})) as [Result, Result, Result];
raw.close();
await sdk.close();
await hub.close();

const fmt = (n: number) => n.toFixed(0).padStart(9);
console.log(
  `echo tool over stdio, ${coresLabel}: ${CALLS} calls with ${IN_FLIGHT} in flight, p50 of ${SEQUENTIAL} sequential calls\n`,
);
console.log("                        calls/s    p50 µs");
console.log(`raw newline-JSON pipe ${fmt(floor.callsPerSecond)} ${fmt(floor.p50)}`);
console.log(`SDK v2 Client         ${fmt(sdkResult.callsPerSecond)} ${fmt(sdkResult.p50)}`);
console.log(`mcplex hub.callTool   ${fmt(hubResult.callsPerSecond)} ${fmt(hubResult.p50)}`);
console.log("");
const row = (label: string, value: number, target: string) =>
  console.log(`${label.padEnd(44)} ${value.toFixed(2).padStart(6)}   (target ${target})`);
row("mcplex / SDK throughput", hubResult.callsPerSecond / sdkResult.callsPerSecond, ">= 3");
row("mcplex / raw pipe throughput", hubResult.callsPerSecond / floor.callsPerSecond, ">= 0.40");
row("mcplex / SDK sequential p50", hubResult.p50 / sdkResult.p50, "<= 0.5");
row("raw pipe / SDK sequential p50", floor.p50 / sdkResult.p50, "info: the floor of the row above");

if (!process.argv.includes("--one-core")) {
  // 20 servers that each take 100..1000 ms before they answer (slow to start, not busy): a
  // concurrent start costs about the slowest one. In sh, so that the boots themselves do not
  // saturate two cores; twenty Node processes booting at once take about a second here
  // before any of them runs a line, and that row is printed for information.
  const SLOW = new URL("./slow-server.sh", import.meta.url).pathname;
  function slowServer(name: string, ms: number): ServerConfig {
    return { ...echoServer(name), command: "/bin/sh", args: [SLOW, (ms / 1000).toFixed(3)] } as ServerConfig;
  }
  const delays = Array.from({ length: 20 }, (_, i) => 100 + Math.round((900 * i) / 19));
  const slowestAlone = await timeStart([slowServer("slow", 1000)]);
  const twenty = await timeStart(delays.map((d, i) => slowServer(`s${i}`, d)));
  const nodeSlowest = await timeStart([echoServer("slow", ["--delay-ms", "1000"])]);
  const nodeTwenty = await timeStart(delays.map((d, i) => echoServer(`s${i}`, ["--delay-ms", String(d)])));
  row("start 20 slow servers / slowest alone", twenty / slowestAlone, "<= 1.5");
  console.log(`(20 servers: ${twenty.toFixed(0)} ms; slowest alone: ${slowestAlone.toFixed(0)} ms)`);
  row("the same with 20 Node echo servers", nodeTwenty / nodeSlowest, "info: Node boots compete for 2 cores");
  console.log(`(20 servers: ${nodeTwenty.toFixed(0)} ms; slowest alone: ${nodeSlowest.toFixed(0)} ms)`);
  console.log("");
  alsoOnOneCore();
}
