/**
 * Sandbox benchmark: the per-call cost of a stdio server in bubblewrap against the same server
 * unsandboxed, both behind one hub in the same run (calls interleaved, so a slow moment of a
 * shared machine hits both alike). Prints the ratios; absolute numbers here are noise. Also
 * the start time of each (time to ready), median of a few starts.
 *
 *   npx tsx bench/sandbox-bench.ts [--calls N] [--network hosts]
 *
 * `--network hosts` sandboxes with a host list, so that the in-sandbox forwarder and the host
 * proxy run too (they carry no MCP traffic: stdio does not go through them).
 */
import { SANDBOX_DEFAULTS } from "../src/config/read-sandbox.js";
import type { SandboxConfig, ServerConfig } from "../src/config/types.js";
import { Hub } from "../src/hub/hub.js";
import { measureInterleaved, median } from "./interleaved.js";

const ECHO = new URL("./echo-server.mjs", import.meta.url).pathname;
const argCalls = process.argv.indexOf("--calls");
const CALLS = argCalls === -1 ? 20_000 : Number(process.argv[argCalls + 1]);
const sandbox: SandboxConfig = process.argv.includes("--network")
  ? { ...SANDBOX_DEFAULTS, network: ["example.com"] }
  : SANDBOX_DEFAULTS;

function echo(name: string, sandboxed: boolean): ServerConfig {
  return {
    name,
    enabled: true,
    timeout: 60_000,
    startTimeout: 30_000,
    lazy: false,
    tools: {},
    transport: "stdio",
    command: process.execPath,
    args: [ECHO],
    env: {},
    ...(sandboxed ? { sandbox } : {}),
  };
}

const configOf = (servers: ServerConfig[]) => ({
  source: "bench",
  format: "mcplex" as const,
  servers,
  profiles: {},
  tokens: [],
  secrets: [],
});

/** Milliseconds from `start()` to ready, for one server alone. */
async function startTime(sandboxed: boolean): Promise<number> {
  const hub = new Hub({ config: configOf([echo("s", sandboxed)]) });
  const t = performance.now();
  await hub.start();
  const ms = performance.now() - t;
  if (hub.servers()[0]?.state !== "ready") throw new Error(`did not start: ${hub.servers()[0]?.error}`);
  await hub.close();
  return ms;
}

const starts = { plain: [] as number[], sandboxed: [] as number[] };
for (let i = 0; i < 7; i++) {
  starts.plain.push(await startTime(false));
  starts.sandboxed.push(await startTime(true));
}

const hub = new Hub({ config: configOf([echo("plain", false), echo("boxed", true)]) });
await hub.start();
for (const server of hub.servers())
  if (server.state !== "ready") throw new Error(`${server.name}: ${server.error}`);
const call = (tool: string) => () => hub.callTool(tool, { message: "hi" });
const [plain, boxed] = (await measureInterleaved([call("plain__echo"), call("boxed__echo")], {
  calls: CALLS,
  inFlight: 64,
  sequential: 2_000,
})) as [{ callsPerSecond: number; p50: number }, { callsPerSecond: number; p50: number }];
await hub.close();

const fmt = (n: number) => n.toFixed(0).padStart(9);
console.log(`sandbox: network ${JSON.stringify(sandbox.network)}; ${CALLS} calls, 64 in flight`);
console.log("                      calls/s    p50 µs   start ms");
console.log(`unsandboxed       ${fmt(plain.callsPerSecond)} ${fmt(plain.p50)} ${fmt(median(starts.plain))}`);
console.log(
  `sandboxed (bwrap) ${fmt(boxed.callsPerSecond)} ${fmt(boxed.p50)} ${fmt(median(starts.sandboxed))}`,
);
console.log("");
console.log(
  `throughput sandboxed / unsandboxed   ${(boxed.callsPerSecond / plain.callsPerSecond).toFixed(2)}`,
);
console.log(`p50 latency sandboxed / unsandboxed  ${(boxed.p50 / plain.p50).toFixed(2)}`);
console.log(
  `start time sandboxed / unsandboxed   ${(median(starts.sandboxed) / median(starts.plain)).toFixed(2)}`,
);
