/**
 * The fleet of bench:compare's cold start: ten real stdio MCP servers from npm that start
 * without an API key or a network, three of them the project's own dev dependencies, seven
 * installed at exact versions into .bench-peers/ (peers.ts). Each is started as `node` and its
 * JS entry, so that no npm resolution is in the timing.
 */
import { join } from "node:path";
import { type Absent, ensurePackages, PEERS_DIR, type Peer, peerBin } from "./peers.js";
import { versionOf } from "./targets.js";

/** One server of the fleet, ready to start. */
export interface FleetServer {
  /** Its name in mcplex's config (and so its tools' prefix). */
  name: string;
  pkg: string;
  version: string;
  /** Node's arguments: its entry, then its own. */
  argv: string[];
  /** What it needs in its environment besides the inherited one (no keys: none needs one). */
  env: Record<string, string>;
}

interface Member extends Peer {
  /** The config name. */
  id: string;
  /** Its arguments after the entry; `{scratch}` is the run's scratch folder. */
  args?: string[];
  env?: Record<string, string>;
}

const ROOT_MODULES = new URL("../../node_modules/", import.meta.url).pathname;

/** The project's dev dependencies among the fleet: installed by `npm ci`, not into .bench-peers/. */
const OWN: readonly Member[] = [
  {
    id: "everything",
    name: "server-everything",
    pkg: "@modelcontextprotocol/server-everything",
    version: "",
    bin: "dist/index.js",
  },
  {
    id: "filesystem",
    name: "server-filesystem",
    pkg: "@modelcontextprotocol/server-filesystem",
    version: "",
    bin: "dist/index.js",
    args: ["{scratch}"],
  },
  {
    id: "memory",
    name: "server-memory",
    pkg: "@modelcontextprotocol/server-memory",
    version: "",
    bin: "dist/index.js",
    env: { MEMORY_FILE_PATH: "{scratch}/memory.jsonl" },
  },
];

/** The seven from npm, at the versions measured (each checked to start offline, keyless). */
export const FLEET_PEERS: readonly Member[] = [
  {
    id: "thinking",
    name: "server-sequential-thinking",
    pkg: "@modelcontextprotocol/server-sequential-thinking",
    version: "2026.8.31",
    bin: "dist/index.js",
  },
  {
    id: "github",
    name: "server-github",
    pkg: "@modelcontextprotocol/server-github",
    version: "2025.4.8",
    bin: "dist/index.js",
  },
  {
    id: "notion",
    name: "notion-mcp-server",
    pkg: "@notionhq/notion-mcp-server",
    version: "2.5.2",
    bin: "bin/cli.mjs",
  },
  {
    id: "context7",
    name: "context7-mcp",
    pkg: "@upstash/context7-mcp",
    version: "4.1.1",
    bin: "dist/index.js",
  },
  { id: "playwright", name: "playwright-mcp", pkg: "@playwright/mcp", version: "0.0.83", bin: "cli.js" },
  {
    id: "chart",
    name: "mcp-server-chart",
    pkg: "@antv/mcp-server-chart",
    version: "0.9.10",
    bin: "build/index.js",
  },
  {
    id: "devtools",
    name: "chrome-devtools-mcp",
    pkg: "chrome-devtools-mcp",
    version: "1.11.0",
    bin: "build/src/bin/chrome-devtools-mcp.js",
    // As a user who keeps it off the network configures it: no usage statistics, no update check.
    args: ["--no-usage-statistics"],
    env: { CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: "1" },
  },
];

export interface FleetSetup {
  servers: FleetServer[];
  /** Packages of the fleet that are not measured, and why. */
  absent: Absent[];
}

const fill = (text: string, scratch: string) => text.replaceAll("{scratch}", scratch);

function server(m: Member, entry: string, version: string, scratch: string): FleetServer {
  return {
    name: m.id,
    pkg: m.pkg,
    version,
    argv: [entry, ...(m.args ?? []).map((a) => fill(a, scratch))],
    env: Object.fromEntries(Object.entries(m.env ?? {}).map(([k, v]) => [k, fill(v, scratch)])),
  };
}

/** Installs what .bench-peers/ lacks of the fleet; the servers ready to start, in a fixed order. */
export async function ensureFleet(scratch: string, dir = PEERS_DIR): Promise<FleetSetup> {
  const setup = await ensurePackages(FLEET_PEERS, dir);
  const own = OWN.map((m) => {
    const folder = join(ROOT_MODULES, m.pkg);
    return server(m, join(folder, m.bin), versionOf(join(folder, "package.json")), scratch);
  });
  const installed = FLEET_PEERS.filter((m) => setup.installed.some((p) => p.pkg === m.pkg)).map((m) =>
    server(m, peerBin(m, dir), m.version, scratch),
  );
  return { servers: [...own, ...installed], absent: setup.absent };
}
