/**
 * The peers bench:compare measures mcplex against, installed from npm at exact versions into a
 * scratch folder the repository ignores (`.bench-peers/`), so that a rerun does not reinstall
 * and the project's own dependencies stay as they are.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The scratch folder peers are installed into (ignored by git). */
export const PEERS_DIR = new URL("../../.bench-peers/", import.meta.url).pathname;

export interface Peer {
  /** The name the page shows. */
  name: string;
  /** The npm package and the exact version measured. */
  pkg: string;
  version: string;
  /** The file of the package that is run, relative to the package's folder. */
  bin: string;
}

/** The peers installed from npm, each at the exact version the page prints. */
export const PEERS = {
  supergateway: { name: "supergateway", pkg: "supergateway", version: "4.0.0", bin: "dist/index.js" },
  mcpProxy: { name: "mcp-proxy", pkg: "mcp-proxy", version: "6.7.19", bin: "dist/bin/mcp-proxy.mjs" },
} as const satisfies Record<string, Peer>;

/** Peers the issue names that the bench does not run, each with the reason the page prints. */
export interface Absent {
  name: string;
  reason: string;
}

/** Peers that are not measured whatever the machine, and why. */
export const NOT_MEASURED: readonly Absent[] = [
  {
    name: "mcp-hub 4.2.1",
    reason:
      "its one client endpoint is the legacy HTTP+SSE transport (GET /mcp, POST /messages), not Streamable HTTP, and it has no stdio front",
  },
];

/** 1MCP's package: looked up at each run, since it may be installable on another machine. */
const ONE_MCP = "@1mcp/agent";

/** Where `peer`'s runnable file is once installed. */
export function peerBin(peer: Peer, dir = PEERS_DIR): string {
  return join(dir, "node_modules", peer.pkg, peer.bin);
}

/** The version of `peer` installed in `dir`, if any. */
function installedVersion(peer: Peer, dir: string): string | undefined {
  const manifest = join(dir, "node_modules", peer.pkg, "package.json");
  if (!existsSync(manifest)) return undefined;
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

export interface PeerSetup {
  /** The peers ready to run. */
  installed: Peer[];
  /** Peers not measured, and why (an install that failed, a package npm does not have). */
  absent: Absent[];
}

/**
 * Installs the peers missing from `dir` (or at another version) with `npm install --prefix`,
 * then says which are ready. A failed install is reported, not thrown: the page names it.
 */
export async function ensurePeers(dir = PEERS_DIR): Promise<PeerSetup> {
  const setup = await ensurePackages(Object.values(PEERS), dir);
  setup.absent.unshift(...NOT_MEASURED);
  setup.absent.push({ name: "1MCP", reason: await oneMcpReason() });
  return setup;
}

/**
 * Installs the packages of `peers` missing from `dir` (or at another version), all in one
 * `npm install`; when that fails, each on its own, so that one package that cannot be
 * installed leaves the others measured. Which are ready, and why the others are not.
 */
export async function ensurePackages(peers: readonly Peer[], dir = PEERS_DIR): Promise<PeerSetup> {
  mkdirSync(dir, { recursive: true });
  const missing = peers.filter((p) => installedVersion(p, dir) !== p.version);
  const absent: Absent[] = [];
  const install = (some: readonly Peer[]) =>
    run(
      "npm",
      [
        "install",
        "--prefix",
        dir,
        "--no-audit",
        "--no-fund",
        "--save-exact",
        ...some.map((p) => `${p.pkg}@${p.version}`),
      ],
      { timeout: 300_000 },
    );
  const failure = (error: unknown) => String((error as { stderr?: string }).stderr ?? error);
  if (missing.length > 0) {
    try {
      await install(missing);
    } catch (error) {
      const text = failure(error);
      // Each on its own only when npm was reached: an unreachable registry fails them all alike.
      const eachAlone = missing.length > 1 && !UNREACHABLE.test(text);
      const alone: [Peer, string][] = eachAlone ? [] : missing.map((p) => [p, text]);
      if (eachAlone) {
        for (const p of missing) {
          try {
            await install([p]);
          } catch (one) {
            alone.push([p, failure(one)]);
          }
        }
      }
      for (const [p, why] of alone)
        absent.push({ name: `${p.name} ${p.version}`, reason: `npm install failed: ${firstLine(why)}` });
    }
  }
  return { installed: peers.filter((p) => installedVersion(p, dir) === p.version), absent };
}

/** Why 1MCP is not measured: npm does not have it here, or the bench has no target for it yet. */
async function oneMcpReason(): Promise<string> {
  try {
    const { stdout } = await run("npm", ["view", ONE_MCP, "version"], { timeout: 60_000 });
    return `\`${ONE_MCP}\` ${stdout.trim()} is on npm, but this bench has no target for it yet`;
  } catch (error) {
    const text = String((error as { stderr?: string }).stderr ?? error);
    const code = /npm error code (\S+)/.exec(text)?.[1] ?? firstLine(text);
    return `not installable from npm on this machine (\`npm view ${ONE_MCP}\`: ${code})`;
  }
}

/** True when `setup` failed because the registry could not be reached at all. */
export function registryUnreachable(setup: PeerSetup): boolean {
  return setup.absent.some((a) => UNREACHABLE.test(a.reason));
}

/** What npm says when it cannot reach the registry. */
const UNREACHABLE = /E(NOTFOUND|AI_AGAIN|CONNREFUSED|CONNRESET|TIMEDOUT)|ETIMEDOUT/;

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((l) => /error/i.test(l))
      ?.trim()
      .slice(0, 160) ?? text.slice(0, 160)
  );
}
