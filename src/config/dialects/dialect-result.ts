import { joinPath } from "../config-issues.js";
import { checkName, SERVER_DEFAULTS } from "../read-server.js";
import type { ProfileConfig, ServerConfig } from "../types.js";
import type { ValueReader } from "../value-reader.js";

/** What a dialect of other applications' files gives: servers, and profiles where it has agents. */
export interface DialectResult {
  servers: ServerConfig[];
  profiles: Record<string, ProfileConfig>;
  /** Servers a switch turned off all at once (see `McplexConfig.disabledBlock`). */
  disabledBlock?: { path: string; servers: string[] };
}

/** The fields of a server these dialects do not set. */
export function serverDefaults(name: string) {
  return { name, ...SERVER_DEFAULTS, tools: {} };
}

/**
 * A server name written as a value (`name: memory`), never expanded: names are identities, as
 * map keys are in the other dialects.
 */
export function readNameValue(reader: ValueReader, value: unknown, path: string, what: string) {
  if (typeof value !== "string") {
    const got = value === undefined ? "is missing" : "must be a string";
    reader.fail(path, `${got}; give the ${what} a name such as "memory"`);
    return undefined;
  }
  return checkName(reader, value, path, what) ? value : undefined;
}

/**
 * Profiles from `NAME: {allowed_servers: [...]}` (an agent's permissions): each becomes a
 * profile with those servers. A server that is not defined is an error: the agent would
 * silently lose it.
 */
export function readAllowedServers(
  reader: ValueReader,
  value: unknown,
  path: string,
  servers: ReadonlySet<string>,
  profiles: Record<string, ProfileConfig>,
): void {
  const node = reader.map(value, path);
  for (const [agent, entry] of Object.entries(node ?? {})) {
    const agentPath = joinPath(path, agent);
    const nameOk = checkName(reader, agent, agentPath, "agent");
    const permissions = reader.map(entry, agentPath);
    if (permissions === undefined) continue;
    reader.knownKeys(permissions, agentPath, ["allowed_servers"]);
    const listPath = joinPath(agentPath, "allowed_servers");
    if (permissions.allowed_servers === undefined) {
      reader.fail(agentPath, 'needs "allowed_servers": the list of server names the agent may use');
      continue;
    }
    const allowed = reader.stringList(permissions.allowed_servers, listPath);
    if (allowed === undefined) continue;
    allowed.forEach((server, i) => {
      if (!servers.has(server)) {
        const known = [...servers].join(", ") || "none";
        reader.fail(joinPath(listPath, i), `unknown server "${server}"; the servers are: ${known}`);
      }
    });
    if (!nameOk) continue;
    if (agent in profiles) {
      reader.fail(agentPath, `agent "${agent}" has permissions in two places; keep one`);
      continue;
    }
    profiles[agent] = { servers: allowed, tools: {} };
  }
}
