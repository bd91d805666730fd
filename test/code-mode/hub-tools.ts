/**
 * Real tools for code-mode tests: a hub over server-everything (and, when asked, server-filesystem
 * on a temp dir), its catalog as code-mode tools, and a callTool that records what it was given.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallTool } from "../../src/code-mode/index.js";
import type { CodeTool } from "../../src/code-mode/tool-bindings.js";
import { Hub } from "../../src/hub/hub.js";
import { configOf, EVERYTHING, stdio } from "../support/config.js";

export const FILESYSTEM = "node_modules/.bin/mcp-server-filesystem";

export interface HubTools {
  hub: Hub;
  tools: CodeTool[];
  /** Forwards to the hub, recording each call's name, arguments and signal. */
  callTool: CallTool;
  calls: Array<{ name: string; args: Record<string, unknown>; signal: AbortSignal }>;
  /** Resolves at the next call the hub receives. */
  nextCall(): Promise<{ name: string; signal: AbortSignal }>;
  close(): Promise<void>;
}

/** Starts the hub; every server must come up. */
export async function startHubTools(options: { filesystem?: boolean } = {}): Promise<HubTools> {
  const dir = mkdtempSync(join(tmpdir(), "mcplex-code-mode-"));
  const servers = [stdio("everything", EVERYTHING, ["stdio"])];
  if (options.filesystem) servers.push(stdio("filesystem", FILESYSTEM, [dir]));
  const hub = new Hub({ config: configOf(servers) });
  await hub.start();
  const failed = hub.servers().filter((s) => s.state !== "ready");
  if (failed.length > 0) {
    await hub.close();
    throw new Error(`servers did not start: ${failed.map((s) => `${s.name}: ${s.error}`).join("; ")}`);
  }
  const tools: CodeTool[] = hub.tools().map((t) => ({
    server: t.server,
    name: t.originalName,
    exposed: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    inputSchema: t.inputSchema as Record<string, unknown>,
    ...(t.outputSchema === undefined ? {} : { outputSchema: t.outputSchema as Record<string, unknown> }),
  }));
  const calls: HubTools["calls"] = [];
  let waiters: Array<(call: { name: string; signal: AbortSignal }) => void> = [];
  return {
    hub,
    tools,
    calls,
    callTool(name, args, signal) {
      calls.push({ name, args, signal });
      const current = waiters;
      waiters = [];
      for (const wake of current) wake({ name, signal });
      return hub.callTool(name, args, { signal });
    },
    nextCall: () => new Promise((resolve) => waiters.push(resolve)),
    async close() {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
