/**
 * A gateway of remote servers, started: three Streamable HTTP MCP servers (server-everything
 * in its streamableHttp mode, on loopback), each behind delay-relay.mjs so that each round trip
 * costs what one to a server elsewhere does. Measured: each upstream's connect and first
 * `tools/list` alone with the raw client, and `mcplex serve --stdio` with the three as `url:`
 * servers, spawn to its first complete `tools/list` (with the delay, and without it: mcplex's
 * own start). Connected one after another, mcplex would take their sum; concurrently, their max.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { listening } from "../process-stats.js";
import { listTools, mcplexSpec, mcplexStart, writeMcplexConfig } from "./fleet-start.js";
import { handshake, httpConnection } from "./raw-clients.js";
import { freePort } from "./targets.js";

const EVERYTHING = new URL(
  "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js",
  import.meta.url,
).pathname;
const DELAY_RELAY = new URL("./delay-relay.mjs", import.meta.url).pathname;
/** The delay each way, ms: a round trip of 80 ms, as to a server in another region. */
export const ONE_WAY_MS = 40;
export const REMOTES = ["east", "west", "north"] as const;

export interface RemoteRounds {
  oneWayMs: number;
  /** Each upstream's connect and first `tools/list` alone, ms. */
  alone: Map<string, number[]>;
  /** mcplex spawn to its first complete `tools/list`, with the delay and without it. */
  mcplex: number[];
  mcplexNear: number[];
  failures: string[];
}

/** Resolves once `port` accepts a connection (the server is listening). */
async function accepting(port: number, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server-everything exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (ok) return;
    if (performance.now() > deadline) throw new Error(`server-everything: port ${port} never listened`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The three upstreams and their relays, running until `stop`. */
export async function startRemotes(oneWayMs = ONE_WAY_MS): Promise<{
  near: Map<string, URL>;
  far: Map<string, URL>;
  stop(): void;
}> {
  const children: ChildProcess[] = [];
  const near = new Map<string, URL>();
  const far = new Map<string, URL>();
  try {
    for (const name of REMOTES) {
      const port = await freePort();
      const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
        stdio: "ignore",
        env: { ...process.env, PORT: String(port) },
      });
      children.push(child);
      await accepting(port, child);
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      near.set(name, url);
      const relay = await listening(
        [DELAY_RELAY, "--to", url.href, "--delay", String(oneWayMs)],
        "delay relay",
      );
      children.push(relay.child);
      far.set(name, relay.url);
    }
  } catch (error) {
    for (const c of children) c.kill();
    throw error;
  }
  const stop = () => {
    for (const c of children) c.kill();
  };
  return { near, far, stop };
}

/** The raw client's connect (initialize, initialized) and first list at `url`: ms, and the tools. */
export async function remoteStart(url: URL): Promise<{ ms: number; tools: string[] }> {
  const t = performance.now();
  const c = httpConnection(url, 4);
  try {
    await handshake(c);
    const tools = await listTools(c);
    return { ms: performance.now() - t, tools };
  } finally {
    c.close();
  }
}

/** The config of the three as `url:` servers. */
function remoteConfig(urls: Map<string, URL>, file: string): string {
  return writeMcplexConfig(
    file,
    Object.fromEntries([...urls].map(([name, url]) => [name, { url: url.href }])),
  );
}

/** `rounds` rounds of the remote set's starts, after one of the raw client's alone, not counted. */
export async function remoteRounds(
  scratch: string,
  rounds: number,
  log: (line: string) => void,
): Promise<RemoteRounds> {
  const out: RemoteRounds = {
    oneWayMs: ONE_WAY_MS,
    alone: new Map(),
    mcplex: [],
    mcplexNear: [],
    failures: [],
  };
  let remotes: Awaited<ReturnType<typeof startRemotes>>;
  try {
    remotes = await startRemotes();
  } catch (error) {
    out.failures.push(`the remote servers did not start: ${String(error).slice(0, 300)}`);
    return out;
  }
  try {
    const far = remoteConfig(remotes.far, join(scratch, "remote.yaml"));
    const near = remoteConfig(remotes.near, join(scratch, "remote-near.yaml"));
    const tools = new Map<string, string[]>();
    for (let round = -1; round < rounds; round++) {
      log(`remote: round ${round < 0 ? "0 (not counted)" : `${round + 1} of ${rounds}`}`);
      const keep = <T>(into: T[], v: T) => round >= 0 && into.push(v);
      try {
        for (const name of REMOTES) {
          const r = await remoteStart(remotes.far.get(name)!);
          tools.set(name, r.tools);
          if (!out.alone.has(name)) out.alone.set(name, []);
          keep(out.alone.get(name)!, r.ms);
        }
        // Round -1 warms the upstreams up (their first sessions); mcplex is warm from the fleet.
        if (round < 0) continue;
        // The two take turns going first, so that a slow moment of the machine lands on each.
        const pair: [string, number[]][] = [
          [far, out.mcplex],
          [near, out.mcplexNear],
        ];
        if (round % 2 === 1) pair.reverse();
        for (const [config, into] of pair)
          into.push((await mcplexStart(mcplexSpec(config, "stdio"), tools)).ms);
      } catch (error) {
        out.failures.push(String(error).slice(0, 300));
        break;
      }
    }
  } finally {
    remotes.stop();
  }
  return out;
}
