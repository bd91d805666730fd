import type { McplexConfig, ServerConfig } from "../../src/config/types.js";

const COMMON = { enabled: true, timeout: 10_000, startTimeout: 20_000, lazy: false, tools: {} };

/** A stdio server entry with test defaults. */
export function stdio(
  name: string,
  command: string,
  args: string[] = [],
  extra: Partial<ServerConfig> = {},
): ServerConfig {
  return { ...COMMON, name, transport: "stdio", command, args, env: {}, ...extra } as ServerConfig;
}

/** The SDK v2 fixture server over stdio (dual-era unless flags say otherwise). */
export function fixture(name: string, flags: string[] = [], extra: Partial<ServerConfig> = {}): ServerConfig {
  return stdio(name, "node_modules/.bin/tsx", ["test/fixtures/servers/fixture-server.ts", ...flags], extra);
}

/** A remote server entry. */
export function remote(
  name: string,
  url: string,
  transport: "streamable-http" | "sse" | "websocket" = "streamable-http",
  extra: Partial<ServerConfig> = {},
): ServerConfig {
  return { ...COMMON, name, transport, url, headers: {}, ...extra } as ServerConfig;
}

/** A config holding the given servers. */
export function configOf(servers: ServerConfig[], extra: Partial<McplexConfig> = {}): McplexConfig {
  return { source: "test", format: "mcplex", servers, profiles: {}, tokens: [], secrets: [], ...extra };
}

export const EVERYTHING = "node_modules/.bin/mcp-server-everything";
export const MEMORY = "node_modules/.bin/mcp-server-memory";
