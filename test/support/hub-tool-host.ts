/**
 * The real hub as the agent's ToolHost, over server-everything and server-memory (stdio),
 * recording the calls it forwards so tests can check what the agent did.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolHost } from "../../src/agent/tool-host.js";
import type { ServerConfig } from "../../src/config/types.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, EVERYTHING, MEMORY, stdio } from "./config.js";

export interface HubToolHost extends ToolHost {
  readonly hub: Hub;
  close(): Promise<void>;
  /** Calls the agent made, in order: exposed name and arguments. */
  readonly calls: Array<{ name: string; args: Record<string, unknown> }>;
}

/** server-everything and server-memory (memory file in a fresh temp dir). */
export function defaultServers(): { servers: ServerConfig[]; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-memory-"));
  return {
    servers: [
      stdio("everything", EVERYTHING, ["stdio"]),
      stdio("memory", MEMORY, [], {
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
      } as Partial<ServerConfig>),
    ],
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Starts a hub on the servers; every one must come up. */
export async function createHubToolHost(servers: ServerConfig[]): Promise<HubToolHost> {
  const hub = new Hub({ config: configOf(servers) });
  await hub.start();
  const failed = hub.servers().filter((s) => s.state !== "ready");
  if (failed.length > 0) {
    await hub.close();
    throw new Error(`servers did not start: ${failed.map((s) => `${s.name}: ${s.error}`).join("; ")}`);
  }
  const calls: Array<{ name: string; args: Record<string, unknown> }> = [];
  return {
    hub,
    calls,
    tools: (profile) => hub.tools(profile),
    callTool(name, args, options) {
      calls.push({ name, args });
      return hub.callTool(name, args, options);
    },
    close: () => hub.close(),
  };
}
