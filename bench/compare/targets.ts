/**
 * The targets of bench:compare, per front: how each is started in front of the same raw
 * upstream (bench/echo-server.mjs over stdio; for the HTTP direct and byte relay, the bare
 * bench/compare/http-echo-server.mjs), and how it is started and stopped.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { withDeadline } from "./deadline.js";
import { PEERS, type Peer, peerBin } from "./peers.js";
import { ownProcesses } from "./process-tree.js";
import { type Connection, handshake, httpConnection, stdioConnection } from "./raw-clients.js";

export type Front = "stdio" | "http";

export interface TargetSpec {
  id: string;
  label: string;
  front: Front;
  /** What the page prints as this target's version. */
  version: string;
  /** "direct": the baseline others are read against; "floor": a byte relay; "peer"; "mcplex". */
  role: "direct" | "floor" | "peer" | "mcplex";
  /** Node's arguments to start it (the port for an HTTP front). */
  argv(port: number): string[];
  /** Headers the raw client sends with every request (HTTP fronts only). */
  headers?: Readonly<Record<string, string>>;
}

const here = (file: string) => new URL(file, import.meta.url).pathname;
const ECHO = here("../echo-server.mjs");
const HTTP_ECHO = here("./http-echo-server.mjs");
const TCP_RELAY = here("./tcp-relay.mjs");
const RELAY = here("../relay.mjs");
const SDK_PROXY = here("./sdk-proxy.mjs");
const FRONT_ONLY = here("./front-only.mjs");
const CLI = here("../../dist/bin/mcplex.js");
const ROOT = here("../../");
const node = process.execPath;

/** The version of an installed package, read from its package.json. */
export function versionOf(packageJson: string): string {
  return (JSON.parse(readFileSync(packageJson, "utf8")) as { version: string }).version;
}

/** mcplex's version, with the commit measured when this is a git checkout. */
function mcplexVersion(): string {
  const version = versionOf(join(ROOT, "package.json"));
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    return `${version} (${commit})`;
  } catch {
    return version;
  }
}

/** All targets, for the peers that are installed; `scratch` holds mcplex's config. */
export function targets(installed: readonly Peer[], scratch: string): TargetSpec[] {
  const config = join(scratch, "mcplex.yaml");
  writeFileSync(
    config,
    `servers:\n  echo:\n    command: ${JSON.stringify(node)}\n    args: [${JSON.stringify(ECHO)}]\n`,
  );
  const sdk = versionOf(join(ROOT, "node_modules/@modelcontextprotocol/server/package.json"));
  const mcplex = mcplexVersion();
  const has = (p: Peer) => installed.some((i) => i.pkg === p.pkg);
  const list: TargetSpec[] = [
    {
      id: "direct",
      label: "direct (echo server)",
      front: "stdio",
      version: "-",
      role: "direct",
      argv: () => [ECHO],
    },
    {
      id: "relay",
      label: "byte relay",
      front: "stdio",
      version: "-",
      role: "floor",
      argv: () => [RELAY, node, ECHO],
    },
    {
      id: "sdk",
      label: "SDK v2 proxy",
      front: "stdio",
      version: sdk,
      role: "peer",
      argv: () => [SDK_PROXY, "stdio", "--", node, ECHO],
    },
    {
      id: "mcplex",
      label: "mcplex",
      front: "stdio",
      version: mcplex,
      role: "mcplex",
      argv: () => [CLI, "serve", "--stdio", "--no-prefix", "--config", config],
    },
    {
      id: "direct",
      label: "direct (bare HTTP echo)",
      front: "http",
      version: "-",
      role: "direct",
      argv: (port) => [HTTP_ECHO, "--port", String(port)],
    },
    {
      id: "relay",
      label: "TCP byte relay",
      front: "http",
      version: "-",
      role: "floor",
      argv: (port) => [TCP_RELAY, "--port", String(port)],
    },
    {
      id: "sdk",
      label: "SDK v2 proxy",
      front: "http",
      version: sdk,
      role: "peer",
      argv: (port) => [SDK_PROXY, "http", "--port", String(port), "--", node, ECHO],
    },
    {
      id: "mcplex",
      label: "mcplex",
      front: "http",
      version: mcplex,
      role: "mcplex",
      argv: (port) => [CLI, "serve", "--http", "--port", String(port), "--no-prefix", "--config", config],
    },
    {
      // The front's own cost: no upstream hop, the same work as the bare echo (issue 36's HTTP target).
      id: "mcplex-front",
      label: "mcplex front, in-process echo",
      front: "http",
      version: mcplex,
      role: "mcplex",
      argv: (port) => [FRONT_ONLY, "--port", String(port)],
    },
  ];
  if (has(PEERS.supergateway)) {
    list.push({
      id: "supergateway",
      label: "supergateway --stateful",
      front: "http",
      version: PEERS.supergateway.version,
      role: "peer",
      argv: (port) => [
        peerBin(PEERS.supergateway),
        ...["--stdio", `"${node}" "${ECHO}"`, "--outputTransport", "streamableHttp", "--stateful"],
        ...["--port", String(port), "--logLevel", "none"],
      ],
    });
  }
  if (has(PEERS.mcpProxy)) {
    list.push({
      id: "mcp-proxy",
      label: "mcp-proxy",
      front: "http",
      version: PEERS.mcpProxy.version,
      role: "peer",
      argv: (port) => [
        peerBin(PEERS.mcpProxy),
        ...["--port", String(port), "--host", "127.0.0.1", "--server", "stream", "--", node, ECHO],
      ],
    });
  }
  return list;
}

/** A started target with a raw client session open on it. */
export interface Running {
  spec: TargetSpec;
  pid: number;
  connection: Connection;
  /** The target's own processes (see process-tree.ts), read now. */
  own(): number[];
  stop(): Promise<void>;
}

/** A port on loopback nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** How long a target may take to answer its first initialize. */
const START_MS = 60_000;

/** Starts `spec` and opens a session on it (initialize answered): what a client waits for. */
export async function start(spec: TargetSpec): Promise<Running> {
  const port = spec.front === "http" ? await freePort() : 0;
  const stdio = spec.front === "stdio";
  const child = spawn(node, spec.argv(port), {
    stdio: [stdio ? "pipe" : "ignore", stdio ? "pipe" : "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr = (stderr + c).slice(-2000)));
  const describe = () => `${spec.front} ${spec.label}: ${stderr.trim().slice(-400)}`;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`exited with ${code} while starting: ${describe()}`))),
  );
  exited.catch(() => {});
  let connection: Connection;
  try {
    if (stdio) {
      connection = stdioConnection(child, describe);
      await withDeadline(
        Promise.race([handshake(connection), exited]),
        START_MS,
        `no initialize answer in ${START_MS / 1000} s`,
      );
    } else {
      connection = httpConnection(new URL(`http://127.0.0.1:${port}/mcp`), 64, spec.headers);
      await withDeadline(
        Promise.race([untilListening(connection), exited]),
        START_MS,
        `no initialize answer in ${START_MS / 1000} s`,
      );
    }
  } catch (error) {
    await stopTree(child);
    throw error;
  }
  return {
    spec,
    pid: child.pid!,
    connection,
    own: () => ownProcesses(child.pid!),
    stop: async () => {
      connection.close();
      await stopTree(child);
    },
  };
}

/** Retries the handshake while the port refuses connections (the target still starting). */
async function untilListening(c: Connection): Promise<void> {
  const deadline = performance.now() + START_MS;
  for (;;) {
    try {
      return await handshake(c);
    } catch (error) {
      if (!/ECONNREFUSED|ECONNRESET/.test(String(error)) || performance.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** Stops `child` and every process under it: SIGTERM, then SIGKILL for what is left after 3 s. */
async function stopTree(child: ChildProcess): Promise<void> {
  const all = child.pid === undefined ? [] : descendants(child.pid);
  if (child.exitCode === null && child.signalCode === null) {
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await gone;
    clearTimeout(timer);
  }
  for (const pid of all) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone with its parent.
    }
  }
}

/** Every process under `pid`, the upstream included. */
function descendants(pid: number): number[] {
  return ownProcesses(pid, { withUpstream: true }).filter((p) => p !== pid);
}
