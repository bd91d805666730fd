import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import type { SandboxConfig, ServerConfig, StdioServerConfig } from "../config/types.js";
import { SECCOMP_FD, sandboxLaunch } from "../sandbox/sandbox-launch.js";
import { signalGroup, trackChild } from "./child-processes.js";

/** What to run. */
export interface StdioServerParams {
  command: string;
  args?: string[];
  /** Added to the inherited safe environment (`defaultEnvironment` in spawn-server.ts). */
  env?: Record<string, string>;
  cwd?: string;
  /** Largest accepted line from the server, in bytes. Default 64 MiB. */
  maxLineBytes?: number;
  /**
   * Bytes that may wait for the server to read its stdin; past that, large messages are
   * refused with a "queue full" error. Default 32 MiB.
   */
  maxQueuedBytes?: number;
  /** Server name for error messages. */
  server?: string;
  /** Run it inside bubblewrap, confined as this says (src/sandbox/). */
  sandbox?: SandboxConfig;
  /** The config's folder, which a sandboxed server does not see unless its `fs` lists it. */
  configDir?: string;
}

/**
 * Environment variables passed to every child, as the SDK does: enough to find
 * programs and run them, but not the parent's secrets (notably `MCPLEX_SECRET_KEY`).
 */
const INHERITED_ENV = [
  "HOME",
  "LOGNAME",
  "PATH",
  "SHELL",
  "TERM",
  "USER",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TMPDIR",
  "TZ",
  "NODE_EXTRA_CA_CERTS",
  "NODE_OPTIONS",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "XDG_CONFIG_HOME",
  "XDG_CACHE_HOME",
  "XDG_DATA_HOME",
  "npm_config_cache",
];

/** The part of `process.env` a child inherits. */
export function defaultEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = process.env[key];
    if (value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return env;
}

/** A stdio server's process, and its start: `spawned` rejects with the spawn's error (ENOENT...). */
export interface ServerProcess {
  child: ChildProcess;
  spawned: Promise<void>;
}

/** What a stdio server's config runs: the one translation, for the transport and {@link spawnAhead} alike. */
export function stdioParams(config: StdioServerConfig): StdioServerParams {
  return {
    command: config.command,
    args: config.args,
    env: config.env,
    server: config.name,
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    ...(config.sandbox ? { sandbox: config.sandbox } : {}),
    ...(config.sandbox && config.configDir !== undefined ? { configDir: config.configDir } : {}),
  };
}

/**
 * Starts a stdio server's process, tracked so that it ends with this one. A sandboxed server
 * starts inside bubblewrap; that throws SANDBOX_UNAVAILABLE where the sandbox cannot run.
 */
export function spawnServer(params: StdioServerParams): ServerProcess {
  const { cwd, sandbox } = params;
  const launch =
    sandbox === undefined
      ? undefined
      : sandboxLaunch({ ...params, args: params.args ?? [], env: params.env ?? {} }, sandbox);
  const command = launch?.command ?? params.command;
  const args = launch?.args ?? params.args ?? [];
  const env = launch?.env ?? params.env ?? {};
  const child = spawn(command, args, {
    env: { ...defaultEnvironment(), ...env },
    cwd,
    // A sandbox's seccomp program goes to bwrap on a fourth descriptor (SECCOMP_FD).
    stdio: launch === undefined ? ["pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe", "pipe"],
    windowsHide: true,
    // A process group of its own, so that stopping it stops what it started too. A
    // Ctrl-C in the terminal then reaches mcplex alone, which stops the groups itself.
    detached: process.platform !== "win32",
  });
  trackChild(child);
  if (launch !== undefined) {
    child.once("exit", () => launch.release());
    child.once("error", () => launch.release());
    const seccomp = child.stdio[SECCOMP_FD] as Writable | null | undefined;
    // A start that fails before bwrap reads it breaks the pipe: the exit says what went wrong.
    seccomp?.on("error", () => {});
    seccomp?.end(launch.seccomp);
  }
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", reject);
  });
  // Whoever takes the process reads the outcome; until then a failure is not unhandled.
  spawned.catch(() => {});
  return { child, spawned };
}

/** Processes started by {@link spawnAhead}, by what they run, until a transport takes them. */
const ahead = new Map<string, ServerProcess>();

/** Everything that changes how the process is launched: a sandboxed server never takes a plain one's. */
function keyOf(params: StdioServerParams): string {
  return JSON.stringify([
    params.command,
    params.args ?? [],
    params.env ?? {},
    params.cwd ?? null,
    params.sandbox ?? null,
    params.configDir ?? null,
  ]);
}

/**
 * Starts now the processes of the stdio servers a hub's start will start (enabled, not lazy,
 * shared, not simulated), before the code that talks to them has loaded: a client that spawns
 * `mcplex serve --stdio` for each session waits for both, and so they overlap. The transport
 * that would spawn the same command, arguments, environment and directory takes the process
 * instead ({@link takeSpawnedAhead}); {@link dropSpawnedAhead} stops those nobody took.
 * Returns the processes it started.
 */
export function spawnAhead(servers: readonly ServerConfig[]): ChildProcess[] {
  const started: ChildProcess[] = [];
  for (const server of servers) {
    if (server.transport !== "stdio" || !server.enabled || server.lazy) continue;
    if (server.share === false || server.simulate === true) continue;
    // A sandbox's start can fail with advice; the transport's start reports it where it belongs.
    if (server.sandbox) continue;
    const params = stdioParams(server);
    const key = keyOf(params);
    if (ahead.has(key)) continue;
    const spawned = spawnServer(params);
    ahead.set(key, spawned);
    started.push(spawned.child);
  }
  return started;
}

/** The process {@link spawnAhead} started for these params, once; else `undefined`. */
export function takeSpawnedAhead(params: StdioServerParams): ServerProcess | undefined {
  if (ahead.size === 0) return undefined;
  const key = keyOf(params);
  const taken = ahead.get(key);
  ahead.delete(key);
  return taken;
}

/** Stops the processes {@link spawnAhead} started that no transport took (once the hub's start is over). */
export function dropSpawnedAhead(): void {
  for (const { child } of ahead.values()) signalGroup(child, "SIGKILL");
  ahead.clear();
}
