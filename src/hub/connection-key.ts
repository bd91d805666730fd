import type { ServerConfig } from "../config/types.js";

/**
 * What makes two server definitions the same connection: the same command, args,
 * env and cwd (stdio), the same URL and headers (remote), or the same root and rules
 * (workspace), and the same pinned protocol revision. Servers with equal keys share one upstream.
 */
export function connectionKey(config: ServerConfig): string {
  // A pinned revision is a different connection; unpinned keys stay as they were.
  const key = baseKey(config);
  return config.protocolVersion === undefined ? key : `${key}@${config.protocolVersion}`;
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
