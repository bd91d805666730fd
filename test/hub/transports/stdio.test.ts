/**
 * The transport contract over stdio: the SDK v2 fixture server as a dual-era peer (2026-07-28)
 * and as a 2025-only one, and server-everything (a 2025 server from npm).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerConfig } from "../../../src/config/types.js";
import type { Hub, ServerStatus } from "../../../src/hub/hub.js";
import { fileHasLine, processGone } from "../../support/wait.js";
import { EVERYTHING_BIN, EVERYTHING_CALLS } from "./everything-peer.js";
import { FIXTURE_CALLS, SERVER_DEFAULTS } from "./fixture-contract.js";
import { type PeerSession, transportContract } from "./transport-contract.case.js";

const ROOT = join(import.meta.dirname, "../../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");
const FIXTURE = join(ROOT, "test/fixtures/servers/fixture-server.ts");

function stdioServer(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): ServerConfig {
  return { ...SERVER_DEFAULTS, name, transport: "stdio", command, args, env };
}

/** The pids to see gone after close: the spawned one, and the server's own when it runs under a launcher (tsx). */
async function pidsOf(hub: Hub, status: ServerStatus, pidTool: string | undefined): Promise<number[]> {
  const pids = status.pid === undefined ? [] : [status.pid];
  if (pidTool !== undefined) {
    const result = await hub.callTool(pidTool, {});
    const [first] = (result.content ?? []) as Array<{ text?: string }>;
    pids.push(Number(first?.text));
  }
  if (pids.length === 0) throw new Error(`${status.name} reports no pid`);
  return pids;
}

async function fixtureSession(name: string, flags: string[]): Promise<PeerSession> {
  const dir = await mkdtemp(join(tmpdir(), "mcplex-stdio-"));
  const log = join(dir, "fixture.log");
  return {
    server: stdioServer(name, TSX, [FIXTURE, ...flags], { FIXTURE_LOG: log }),
    cancelled: (tag) => fileHasLine(log, `cancelled ${tag}`),
    watchRelease: async (hub, status) => {
      const pids = await pidsOf(hub, status, `${name}__pid`);
      return async () => {
        await Promise.all(pids.map((pid) => processGone(pid)));
      };
    },
    stop: () => rm(dir, { recursive: true, force: true }),
  };
}

transportContract({
  label: "stdio: fixture server, dual-era",
  protocolVersion: "2026-07-28",
  transport: "stdio",
  ...FIXTURE_CALLS,
  start: () => fixtureSession("fixture", []),
});

transportContract({
  label: "stdio: fixture server, 2025 only",
  protocolVersion: "2025-11-25",
  transport: "stdio",
  ...FIXTURE_CALLS,
  start: () => fixtureSession("legacy", ["--legacy-only"]),
});

transportContract({
  label: "stdio: server-everything (2025)",
  protocolVersion: "2025-11-25",
  transport: "stdio",
  ...EVERYTHING_CALLS,
  start: async () => ({
    server: stdioServer("everything", EVERYTHING_BIN, ["stdio"]),
    watchRelease: async (hub, status) => {
      const [pid] = await pidsOf(hub, status, undefined);
      return () => processGone(pid!);
    },
    stop: async () => {},
  }),
});
