import { SERVER_DEFAULTS } from "../config/read-server.js";
import type { ServerConfig } from "../config/types.js";

/**
 * What makes two server definitions the same connection: the same launch of a stdio server
 * (command, args, env, cwd, and its sandbox with the folder it hides: a sandboxed server never
 * shares the process of one that is not, nor of one confined otherwise), the same URL and
 * headers (remote), or the same root and rules (workspace), the same pinned protocol revision,
 * and the same settings of the connection itself (start timeout, idle stop, reconnecting,
 * per-client connections, per-user credentials, recording, simulation): a shared connection
 * runs by one definition's settings, so two that differ there get one each. Servers with equal
 * keys share one upstream.
 */
export function connectionKey(config: ServerConfig): string {
  // Keys of definitions that set none of these stay as they were (cached tool lists keep theirs).
  let key = baseKey(config);
  const sandbox = sandboxKey(config);
  if (sandbox !== undefined) key += `|sandbox:${sandbox}`;
  if (config.protocolVersion !== undefined) key += `@${config.protocolVersion}`;
  const own = connectionSettings(config);
  return own === undefined ? key : `${key}#${own}`;
}

/** The connection's own settings where a definition sets any, as JSON; else `undefined`. */
function connectionSettings(config: ServerConfig): string | undefined {
  const { idleTimeout, share, maxSessions, breaker, backoff, record, simulate, credentials, maxUsers } =
    config;
  const set = { idleTimeout, share, maxSessions, breaker, backoff, record, simulate, credentials, maxUsers };
  const defined = Object.entries(set).filter(([, value]) => value !== undefined);
  // The start timeout is always set; it counts when it is not the default.
  if (config.startTimeout !== SERVER_DEFAULTS.startTimeout)
    defined.push(["startTimeout", config.startTimeout]);
  return defined.length === 0 ? undefined : JSON.stringify(defined);
}

/** A sandboxed stdio server's confinement, as JSON; `undefined` for one that runs unsandboxed. */
function sandboxKey(config: ServerConfig): string | undefined {
  if (config.transport !== "stdio" || !config.sandbox) return undefined;
  return JSON.stringify([config.sandbox, config.configDir ?? null]);
}

function baseKey(config: ServerConfig): string {
  switch (config.transport) {
    case "stdio":
      return JSON.stringify(["stdio", config.command, config.args, sorted(config.env), config.cwd ?? null]);
    case "local":
      return `local:${localId(config.server)}`;
    case "workspace":
      return JSON.stringify(["workspace", config.root, config.allowWrite, config.rules]);
    case "replay":
      // A replay keeps its place in the recording: never shared between two servers.
      return JSON.stringify(["replay", config.name, config.recording, config.mode]);
    default:
      return JSON.stringify([config.transport, config.url, sorted(config.headers)]);
  }
}

function sorted(record: Record<string, string>): Array<[string, string]> {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const localIds = new WeakMap<object, number>();
let nextLocalId = 0;

/** In-process servers are the same connection only when they are the same object. */
function localId(server: object): number {
  let id = localIds.get(server);
  if (id === undefined) {
    id = ++nextLocalId;
    localIds.set(server, id);
  }
  return id;
}
