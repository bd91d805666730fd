import { joinPath } from "../config-issues.js";
import { checkName, type ReadContext, readRemote, readStdio } from "../read-server.js";
import type { ServerConfig } from "../types.js";
import type { RawMap } from "../value-reader.js";
import { type DialectResult, serverDefaults } from "./dialect-result.js";

const SERVER_KEYS = ["name", "command", "args", "env", "enabled", "url"];

/** Keys of the other dialects, which a bare server map never has at its top. */
const WRAPPER_KEYS = ["mcpServers", "inputs", "mcp", "mcp_servers", "agent_config"];

const isMap = (value: unknown): value is RawMap =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Whether a document is a bare map of servers keyed by id (`{"memory": {"command": ...}}`): no
 * wrapper key (another dialect's, or one of `ourKeys`, the top-level keys of an mcplex file), every value a map, and at least one with `command` or `url` (an entry with
 * neither is then reported where it is, rather than making the file unreadable).
 */
export function isServerMap(doc: RawMap, ourKeys: readonly string[]): boolean {
  const entries = Object.entries(doc);
  const wrapper = (key: string) => WRAPPER_KEYS.includes(key) || ourKeys.includes(key);
  if (entries.length === 0 || entries.some(([key]) => wrapper(key))) return false;
  return (
    entries.every(([, value]) => isMap(value)) &&
    entries.some(
      ([, value]) => (value as RawMap).command !== undefined || (value as RawMap).url !== undefined,
    )
  );
}

/**
 * Reads a bare server map: each id is the server's name in mcplex, its value
 * `{name, command, args, env, enabled}` or `{name, url, enabled}`. `name` is the application's
 * label; two servers with one label are an error, since nobody could tell them apart.
 */
export function readServerMap(ctx: ReadContext, doc: RawMap): DialectResult {
  const { reader } = ctx;
  const servers: ServerConfig[] = [];
  const labels = new Map<string, string>();
  for (const [id, value] of Object.entries(doc)) {
    const path = joinPath("", id);
    const nameOk = checkName(reader, id, path, "server");
    const server = readServer(ctx, id, value, path);
    const label = (value as RawMap).name;
    if (typeof label === "string") {
      const other = labels.get(label);
      if (other !== undefined) {
        reader.fail(
          joinPath(path, "name"),
          `"${label}" is also the name of server "${other}"; names must be unique`,
        );
        continue;
      }
      labels.set(label, id);
    }
    if (server !== undefined && nameOk) servers.push(server);
  }
  return { servers, profiles: {} };
}

function readServer(ctx: ReadContext, id: string, value: unknown, path: string): ServerConfig | undefined {
  const { reader } = ctx;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, SERVER_KEYS);
  if (node.name !== undefined && (typeof node.name !== "string" || node.name.trim() === ""))
    reader.fail(joinPath(path, "name"), "must be a non-empty string, the label the application shows");
  const enabled = reader.boolean(node.enabled, joinPath(path, "enabled")) ?? true;
  const common = { ...serverDefaults(id), enabled };
  if (node.command !== undefined && node.url !== undefined) {
    return reader.fail(
      path,
      'has both "command" and "url"; keep "command" for a local server or "url" for a remote one',
    );
  }
  if (node.command !== undefined) {
    const stdio = readStdio(ctx, node, path);
    return stdio && { ...common, ...stdio };
  }
  if (node.url === undefined)
    return reader.fail(path, 'needs "command" (a local server) or "url" (a remote one)');
  for (const key of ["args", "env"])
    if (node[key] !== undefined) reader.fail(joinPath(path, key), "does not apply to a remote (url) server");
  const remote = readRemote(ctx, node, path, undefined, true);
  return remote && { ...common, ...remote };
}
