import { existsSync, readdirSync } from "node:fs";
import type { McplexConfig, ReplayServerConfig, ServerConfig } from "../config/types.js";
import { recordingFile } from "./recording-writer.js";
import { readToolList } from "./tool-list-store.js";

/** Options of {@link simulatedConfig}. */
export interface SimulateOptions {
  /** Replace every server, not only those with `simulate: true`. */
  all: boolean;
  /** Where recordings are looked for first (`--record DIR`); else each server's `record.dir`. */
  recordDir?: string;
  /** Where cached tool lists are (see `defaultCacheDir`). */
  cacheDir: string;
  /** Seed of the simulators. */
  seed: number;
  /** Recorded time is divided by this; 0 for at once. Default 1. */
  speed?: number;
}

/** How one server is simulated, for the banner. */
export interface SimulatedServer {
  server: string;
  from: "recording" | "tool-list" | "nothing";
  /** The recording files or the cache file, for people. */
  source?: string;
}

/**
 * The config with servers replaced by stand-ins: a server's recording where one exists (its
 * rotated parts too, the oldest first), else a simulator built from its cached tool list. A
 * server with neither becomes a replay of nothing, which fails to start saying so; `servers`
 * says which is which, so the CLI can tell at start.
 */
export function simulatedConfig(
  config: McplexConfig,
  options: SimulateOptions,
): { config: McplexConfig; simulated: SimulatedServer[] } {
  const simulated: SimulatedServer[] = [];
  const replaced = config.servers.map((server): ServerConfig => {
    if (!options.all && server.simulate !== true) return server;
    if (server.transport === "replay") {
      simulated.push({ server: server.name, from: "recording", source: server.recording.join(", ") });
      return server;
    }
    const { record: _, simulate: __, ...common } = commonOf(server);
    const base = { ...common, mode: "sequential" as const, speed: options.speed ?? 1 };
    const dir = options.recordDir ?? server.record?.dir;
    const files = dir === undefined ? [] : recordingParts(dir, server.name);
    if (files.length > 0) {
      simulated.push({ server: server.name, from: "recording", source: files.join(", ") });
      return { ...base, transport: "replay", recording: files } satisfies ReplayServerConfig;
    }
    const cached = readToolList(options.cacheDir, server.name);
    if (cached !== undefined) {
      simulated.push({
        server: server.name,
        from: "tool-list",
        source: `${cached.tools.length} tools cached ${cached.savedAt}`,
      });
      return {
        ...base,
        transport: "replay",
        recording: [],
        simulator: {
          tools: cached.tools,
          seed: options.seed,
          ...(cached.serverInfo === undefined ? {} : { serverInfo: cached.serverInfo }),
        },
      } satisfies ReplayServerConfig;
    }
    simulated.push({ server: server.name, from: "nothing" });
    return { ...base, transport: "replay", recording: [] } satisfies ReplayServerConfig;
  });
  return { config: { ...config, servers: replaced }, simulated };
}

/** A server's recording files in `dir`, the oldest rotated part first. */
export function recordingParts(dir: string, server: string): string[] {
  if (!existsSync(dir)) return [];
  const parts: number[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(`${server}.`) || !name.endsWith(".jsonl")) continue;
    const middle = name.slice(server.length + 1, -".jsonl".length);
    if (middle === "") parts.push(0);
    else if (/^[1-9]\d*$/.test(middle)) parts.push(Number(middle));
  }
  return parts.sort((a, b) => b - a).map((part) => recordingFile(dir, server, part));
}

/** What makes a server a stdio, remote, workspace or in-process one: a stand-in has none of it. */
const TRANSPORT_KEYS = [
  "transport",
  "command",
  "args",
  "env",
  "cwd",
  "url",
  "headers",
  "oauth",
  "fallback",
  "root",
  "allowWrite",
  "rules",
  "server",
];

/** The settings every server has (timeouts, prefix, filters...), without its transport's. */
function commonOf(server: ServerConfig) {
  const common: Record<string, unknown> = { ...server };
  for (const key of TRANSPORT_KEYS) delete common[key];
  return common as Omit<ReplayServerConfig, "transport" | "recording" | "mode" | "speed">;
}

/**
 * The config with every server recorded in `dir` (`mcplex serve --record DIR`); a server's own
 * `record:` keeps its sensitive fields and limits, and only its directory changes.
 */
export function recordedConfig(config: McplexConfig, dir: string): McplexConfig {
  return {
    ...config,
    servers: config.servers.map((server) => ({
      ...server,
      record: { ...(server.record ?? { redact: [] }), dir },
    })),
  };
}
