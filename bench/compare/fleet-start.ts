/**
 * The cold start a user feels with many servers: `mcplex serve` with the ten stdio servers of
 * fleet-servers.ts, spawn to the answer of its first `tools/list` listing the tools of all ten,
 * read against the same ten spawned at once by the raw client (the floor: the slowest server's
 * own start when all ten start together on the same cores), and each one's start alone. Rounds
 * interleave the three, as cold-start.ts does; round -1 is not counted (a cold page cache).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { withDeadline } from "./deadline.js";
import type { FleetServer } from "./fleet-servers.js";
import { cpuSeconds, ownProcesses } from "./process-tree.js";
import { type Connection, handshake, stdioConnection } from "./raw-clients.js";
import { start, type TargetSpec } from "./targets.js";

const CLI = new URL("../../dist/bin/mcplex.js", import.meta.url).pathname;
const node = process.execPath;
/** How long one start may take before it counts as failed. */
const START_MS = 60_000;
/**
 * mcplex's `serve.readyWait` in the bench's configs: a first `tools/list` waits for every server
 * (by default it waits 1 s, then answers with the servers up so far and announces the others).
 */
export const READY_WAIT = "120s";

/** Every tool name a `tools/list` offers, over all its pages. */
export async function listTools(c: Connection): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = (await c.request("tools/list", cursor === undefined ? {} : { cursor })) as {
      tools?: { name: string }[];
      nextCursor?: string;
    };
    names.push(...(page.tools ?? []).map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return names;
}

/**
 * Spawns `server` as its own client would: the raw client over its stdio. In a session of its
 * own, as mcplex spawns its servers (`detached`): with Linux's autogroup scheduling a session
 * is a unit of CPU share, so the floor and mcplex's servers get the same share of a busy core.
 */
async function spawnServer(
  server: FleetServer,
): Promise<{ pid: number; connection: Connection; stop(): Promise<void> }> {
  const child = spawn(node, server.argv, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, ...server.env },
    detached: true,
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr = (stderr + c).slice(-1000)));
  const connection = stdioConnection(child, () => `${server.name}: ${stderr.trim().slice(-300)}`);
  const stop = () => stopChild(child);
  try {
    await withDeadline(handshake(connection), START_MS, `${server.name}: no initialize answer`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { pid: child.pid!, connection, stop };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await gone;
  clearTimeout(timer);
}

/** Spawn to its first `tools/list` answer, ms, and the tools it listed. */
export async function serverStart(server: FleetServer): Promise<{ ms: number; tools: string[] }> {
  const t = performance.now();
  const s = await spawnServer(server);
  try {
    const tools = await listTools(s.connection);
    return { ms: performance.now() - t, tools };
  } finally {
    await s.stop();
  }
}

/**
 * All of `servers` spawned at once: spawn to the last one's `tools/list` answer, ms, and the CPU
 * seconds the ten had used by then.
 */
export async function togetherStart(
  servers: readonly FleetServer[],
): Promise<{ ms: number; tools: number; cpu: number }> {
  const t = performance.now();
  const started = await Promise.allSettled(
    servers.map(async (server) => {
      const s = await spawnServer(server);
      return { s, tools: (await listTools(s.connection)).length };
    }),
  );
  const ms = performance.now() - t;
  const cpu = cpuSeconds(started.flatMap((r) => (r.status === "fulfilled" ? [r.value.s.pid] : [])));
  await Promise.all(started.map((r) => (r.status === "fulfilled" ? r.value.s.stop() : undefined)));
  const failed = started.find((r) => r.status === "rejected");
  if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  const tools = started.reduce((n, r) => n + (r.status === "fulfilled" ? r.value.tools : 0), 0);
  return { ms, tools, cpu };
}

/** mcplex's config of `servers` (JSON, which YAML reads too), written to `file`. */
export function writeMcplexConfig(
  file: string,
  servers: Record<string, { command?: string; args?: string[]; env?: Record<string, string>; url?: string }>,
): string {
  writeFileSync(file, JSON.stringify({ serve: { readyWait: READY_WAIT }, servers }, null, 2));
  return file;
}

/** The config of the fleet, one stdio server each. */
export function fleetConfig(servers: readonly FleetServer[], scratch: string): string {
  return writeMcplexConfig(
    join(scratch, "fleet.yaml"),
    Object.fromEntries(servers.map((s) => [s.name, { command: node, args: s.argv, env: s.env }])),
  );
}

/** `mcplex serve` on `config`, over `front`. */
export function mcplexSpec(config: string, front: "stdio" | "http"): TargetSpec {
  return {
    id: `mcplex-${front}`,
    label: `mcplex serve --${front}`,
    front,
    version: "-",
    role: "mcplex",
    argv: (port) =>
      front === "stdio"
        ? [CLI, "serve", "--stdio", "--config", config]
        : [CLI, "serve", "--http", "--port", String(port), "--config", config],
  };
}

/** One start of mcplex: its time and the CPU seconds used by then. */
export interface McplexStart {
  ms: number;
  /** mcplex and the servers it started. */
  cpu: number;
  /** mcplex's own process. */
  ownCpu: number;
}

/**
 * Spawn of `mcplex serve` to the answer of its first `tools/list`, ms; throws unless that list
 * has every tool of `expected` (server name to the tools it lists to a raw client) under the
 * server's prefix. A server may list more through mcplex: server-everything offers its roots,
 * sampling and elicitation tools to a client that declares those capabilities, as mcplex does.
 */
export async function mcplexStart(
  spec: TargetSpec,
  expected: ReadonlyMap<string, readonly string[]>,
): Promise<McplexStart> {
  const t = performance.now();
  const r = await start(spec);
  try {
    const tools = new Set(await listTools(r.connection));
    const ms = performance.now() - t;
    const cpu = cpuSeconds(ownProcesses(r.pid, { withUpstream: true }));
    const ownCpu = cpuSeconds([r.pid]);
    const missing = [...expected].flatMap(([server, names]) =>
      names.map((n) => `${server}__${n}`).filter((n) => !tools.has(n)),
    );
    if (missing.length > 0)
      throw new Error(
        `${spec.label}: its first tools/list (${tools.size} tools) lacks ${missing.length}: ${missing.slice(0, 5).join(", ")}`,
      );
    return { ms, cpu, ownCpu };
  } finally {
    await r.stop();
  }
}

/** The fleet's figures, one entry per round. */
export interface FleetRounds {
  servers: FleetServer[];
  /** Each server's tools (as it lists them alone to the raw client). */
  tools: Map<string, string[]>;
  /** Each server's start alone, ms. */
  alone: Map<string, number[]>;
  /** All ten at once by the raw client, to the last answer, ms. */
  together: number[];
  /** The ten's CPU seconds by the time of that last answer. */
  togetherCpu: number[];
  stdio: McplexStart[];
  http: McplexStart[];
  /** What failed, and why: the figures it would have given are missing. */
  failures: string[];
}

export interface FleetOptions {
  rounds: number;
  /** Measure `serve --http` too (a third start per round). */
  http: boolean;
}

/**
 * `rounds` rounds of the fleet's starts: each server alone, all at once, mcplex over stdio
 * (and over HTTP). Round -1, not counted, starts each server alone once: it fills the page
 * cache, and a server that does not start here leaves the fleet (named in `failures`).
 */
export async function fleetRounds(
  servers: readonly FleetServer[],
  scratch: string,
  options: FleetOptions,
  log: (line: string) => void,
): Promise<FleetRounds> {
  const out: FleetRounds = {
    servers: [...servers],
    tools: new Map(),
    alone: new Map(servers.map((s) => [s.name, []])),
    together: [],
    togetherCpu: [],
    stdio: [],
    http: [],
    failures: [],
  };
  const failed = new Set<string>();
  const attempt = async (what: string, work: () => Promise<void>) => {
    if (failed.has(what)) return;
    try {
      await work();
    } catch (error) {
      failed.add(what);
      out.failures.push(`${what}: ${String(error).slice(0, 300)}`);
    }
  };
  const aloneRound = async (round: number) => {
    for (let k = 0; k < out.servers.length; k++) {
      const server = out.servers[(round + 1 + k) % out.servers.length]!;
      await attempt(server.name, async () => {
        const { ms, tools } = await serverStart(server);
        out.tools.set(server.name, tools);
        if (round >= 0) out.alone.get(server.name)!.push(ms);
      });
    }
  };
  log("fleet: each server alone once (not counted)");
  await aloneRound(-1);
  out.servers = servers.filter((s) => !failed.has(s.name));
  const config = fleetConfig(out.servers, scratch);
  const steps: [string, () => Promise<void>][] = [
    [
      "all at once",
      async () => {
        const { ms, cpu } = await togetherStart(out.servers);
        out.together.push(ms);
        out.togetherCpu.push(cpu);
      },
    ],
    [
      "mcplex serve --stdio",
      async () => void out.stdio.push(await mcplexStart(mcplexSpec(config, "stdio"), out.tools)),
    ],
  ];
  if (options.http)
    steps.push([
      "mcplex serve --http",
      async () => void out.http.push(await mcplexStart(mcplexSpec(config, "http"), out.tools)),
    ]);
  for (let round = 0; round < options.rounds; round++) {
    log(`fleet: round ${round + 1} of ${options.rounds}`);
    await aloneRound(round);
    // The order of the others rotates too, so that a slow moment of the machine lands on each.
    for (let k = 0; k < steps.length; k++) {
      const [what, work] = steps[(round + k) % steps.length]!;
      await attempt(what, work);
    }
  }
  return out;
}
