import { isDeepStrictEqual } from "node:util";
import { joinPath } from "../config-issues.js";
import { checkName, type ReadContext, readRemote, readStdio } from "../read-server.js";
import type { ProfileConfig, ServerConfig } from "../types.js";
import type { RawMap } from "../value-reader.js";
import { type DialectResult, serverDefaults } from "./dialect-result.js";

const SERVER_KEYS = ["type", "command", "args", "env", "url", "headers"];
const TYPES = ["stdio", "sse", "http"] as const;

const isMap = (value: unknown): value is RawMap =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Each agent under `agent_config: agent_settings:` that has `mcp_servers`, with its path. */
function agentsWithServers(doc: RawMap): Array<[agent: string, servers: unknown, path: string]> {
  const settings = isMap(doc.agent_config) ? doc.agent_config.agent_settings : undefined;
  if (!isMap(settings)) return [];
  return Object.entries(settings)
    .filter(([, agent]) => isMap(agent) && "mcp_servers" in agent)
    .map(([agent, value]) => [
      agent,
      (value as RawMap).mcp_servers,
      joinPath(joinPath("agent_config.agent_settings", agent), "mcp_servers"),
    ]);
}

/** Whether a document has a `mcp_servers:` map, at the top or in an agent's settings. */
export function isMcpServersMap(doc: RawMap): boolean {
  return "mcp_servers" in doc || agentsWithServers(doc).length > 0;
}

/**
 * Reads `mcp_servers: NAME: {type: stdio | sse | http, command, args, env, url, headers}`, at the
 * top level and under `agent_config: agent_settings: AGENT:`. Each agent with servers becomes a
 * profile of its own servers plus the top-level ones (shared by every agent). A name defined in
 * several places must have one definition there: the same one is one server, a different one an
 * error.
 */
export function readMcpServersMap(ctx: ReadContext, doc: RawMap): DialectResult {
  const { reader } = ctx;
  const servers = new Map<string, { server: ServerConfig; path: string }>();
  const add = (map: unknown, path: string): string[] => {
    const node = reader.map(map ?? {}, path);
    const names: string[] = [];
    for (const [name, value] of Object.entries(node ?? {})) {
      const entryPath = joinPath(path, name);
      const nameOk = checkName(reader, name, entryPath, "server");
      const server = readServer(ctx, name, value, entryPath);
      if (server === undefined || !nameOk) continue;
      const seen = servers.get(name);
      if (seen !== undefined && !isDeepStrictEqual(seen.server, server)) {
        reader.fail(
          entryPath,
          `server "${name}" is also defined at ${seen.path} with a different definition; rename one of them`,
        );
        continue;
      }
      if (seen === undefined) servers.set(name, { server, path: entryPath });
      names.push(name);
    }
    return names;
  };
  const shared = "mcp_servers" in doc ? add(doc.mcp_servers, "mcp_servers") : [];
  const profiles: Record<string, ProfileConfig> = {};
  for (const [agent, map, path] of agentsWithServers(doc)) {
    const own = add(map, path);
    if (!checkName(reader, agent, joinPath("agent_config.agent_settings", agent), "agent")) continue;
    profiles[agent] = { servers: [...new Set([...shared, ...own])], tools: {} };
  }
  return { servers: [...servers.values()].map((s) => s.server), profiles };
}

function readServer(ctx: ReadContext, name: string, value: unknown, path: string): ServerConfig | undefined {
  const { reader } = ctx;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, SERVER_KEYS);
  const typePath = joinPath(path, "type");
  const type =
    node.type === undefined
      ? node.url !== undefined && node.command === undefined
        ? undefined
        : "stdio"
      : reader.choice(node.type, typePath, TYPES);
  if (node.type !== undefined && type === undefined) return undefined;
  if (type === "stdio") {
    for (const key of ["url", "headers"])
      if (node[key] !== undefined)
        reader.fail(joinPath(path, key), 'does not apply to a stdio server; set "type: http" or "type: sse"');
    if (node.command === undefined)
      return reader.fail(path, 'is a stdio server and needs a "command" (and "args"), e.g. command: npx');
    const stdio = readStdio(ctx, node, path);
    return stdio && { ...serverDefaults(name), ...stdio };
  }
  for (const key of ["command", "args", "env"])
    if (node[key] !== undefined)
      reader.fail(joinPath(path, key), `does not apply to a ${type ?? "remote"} server`);
  if (node.url === undefined)
    return reader.fail(path, `is a ${type} server and needs a "url" such as "http://127.0.0.1:8000/mcp"`);
  const transport = type === "sse" ? "sse" : type === "http" ? "streamable-http" : undefined;
  const remote = readRemote(ctx, node, path, transport, true);
  return remote && { ...serverDefaults(name), ...remote };
}
