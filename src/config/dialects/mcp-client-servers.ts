import { describeValue, joinPath } from "../config-issues.js";
import { parseDuration } from "../parse-duration.js";
import { type ReadContext, readRemote } from "../read-server.js";
import type { ProfileConfig, ServerConfig } from "../types.js";
import type { RawMap, ValueReader } from "../value-reader.js";
import { type DialectResult, readAllowedServers, readNameValue, serverDefaults } from "./dialect-result.js";

const SERVER_KEYS = ["name", "transport", "command", "url", "env", "timeout"];
const CLIENT_KEYS = ["enabled", "servers", "agent_permissions"];

function mapAt(node: unknown, key: string): RawMap | undefined {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return undefined;
  const value = (node as RawMap)[key];
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as RawMap) : undefined;
}

/** Whether a document keeps its servers in an `mcp: client: servers:` block. */
export function isMcpClientServers(doc: RawMap): boolean {
  const client = mapAt(doc.mcp, "client");
  return client !== undefined && "servers" in client;
}

/**
 * Reads `mcp: client: servers:`, a list of `{name, transport: stdio | websocket, command: [program,
 * ...args] | url, env, timeout}`, and the agents' `agent_permissions: NAME: allowed_servers: [...]`,
 * found next to `servers`, under `mcp:` or at the top level. Only the client block is checked key
 * by key: the rest of the document belongs to the application. `enabled: false` on the block (the
 * application's MCP client turned off) gives no servers: they are checked as written, needing no
 * variable or secret, and named in `disabledBlock`; the agents' profiles name them all the same,
 * and see nothing.
 */
export function readMcpClientServers(ctx: ReadContext, doc: RawMap): DialectResult {
  const { reader } = ctx;
  const mcp = doc.mcp as RawMap;
  const client = mcp.client as RawMap;
  reader.knownKeys(client, "mcp.client", CLIENT_KEYS);
  const enabled = reader.boolean(client.enabled, "mcp.client.enabled") ?? true;
  const serverCtx = enabled ? ctx : { ...ctx, reader: reader.checkOnly() };
  const servers: ServerConfig[] = [];
  const names = new Map<string, number>();
  const list = client.servers ?? [];
  if (!Array.isArray(list)) {
    reader.fail(
      "mcp.client.servers",
      `must be a list of servers ({name, transport, ...}), not ${describeValue(list)}`,
    );
  } else {
    list.forEach((item, i) => {
      const path = joinPath("mcp.client.servers", i);
      const server = readServer(serverCtx, item, path);
      if (server === undefined) return;
      const first = names.get(server.name);
      if (first !== undefined) {
        reader.fail(
          joinPath(path, "name"),
          `"${server.name}" is also the name of mcp.client.servers[${first}]; server names must be unique`,
        );
        return;
      }
      names.set(server.name, i);
      servers.push(server);
    });
  }
  const known = new Set(names.keys());
  const profiles: Record<string, ProfileConfig> = {};
  const placements: Array<[unknown, string]> = [
    [client.agent_permissions, "mcp.client.agent_permissions"],
    [mcp.agent_permissions, "mcp.agent_permissions"],
    [doc.agent_permissions, "agent_permissions"],
  ];
  for (const [value, path] of placements) {
    if (value !== undefined && value !== null) readAllowedServers(reader, value, path, known, profiles);
  }
  if (enabled) return { servers, profiles };
  const disabledBlock = { path: "mcp.client.enabled", servers: servers.map((s) => s.name) };
  return { servers: [], profiles, disabledBlock };
}

/**
 * A server's `timeout`: seconds, possibly fractional (`30.0`), the time the application waits for
 * each request's answer; mcplex's per-request `timeout` in milliseconds.
 */
function readTimeoutSeconds(reader: ValueReader, value: unknown, path: string): number | undefined {
  if (value === undefined) return undefined;
  const read = typeof value === "string" ? reader.string(value, path) : value;
  if (read === undefined) return undefined;
  const expanded = typeof read === "string" ? reader.probe(read).trim() : read;
  const seconds =
    typeof expanded === "string" && /^\d+(\.\d+)?$/.test(expanded) ? Number(expanded) : expanded;
  const ms = typeof seconds === "number" ? parseDuration(seconds * 1000) : undefined;
  if (ms !== undefined) return ms;
  return reader.fail(
    path,
    `must be the request timeout in seconds, such as 30.0 (more than 0, at most 24 days), not ${describeValue(expanded)}`,
  );
}

function readServer(ctx: ReadContext, value: unknown, path: string): ServerConfig | undefined {
  const { reader } = ctx;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  reader.knownKeys(node, path, SERVER_KEYS);
  const name = readNameValue(reader, node.name, joinPath(path, "name"), "server");
  const inferred = node.url !== undefined && node.command === undefined ? "websocket" : "stdio";
  const transport =
    node.transport === undefined
      ? inferred
      : reader.choice(node.transport, joinPath(path, "transport"), ["stdio", "websocket"] as const);
  const env = reader.stringMap(node.env, joinPath(path, "env")) ?? {};
  const timeout = readTimeoutSeconds(reader, node.timeout, joinPath(path, "timeout"));
  const defaults = { ...serverDefaults(name ?? ""), ...(timeout === undefined ? {} : { timeout }) };
  if (transport === undefined) return undefined;
  if (transport === "websocket") {
    if (node.command !== undefined)
      reader.fail(joinPath(path, "command"), 'does not apply to a websocket server; give "url" only');
    if (node.env !== undefined)
      reader.fail(
        joinPath(path, "env"),
        "does not apply to a websocket server (it is not started by mcplex)",
      );
    if (node.url === undefined) {
      return reader.fail(path, 'is a websocket server and needs a "url" such as "ws://127.0.0.1:8765/mcp"');
    }
    const remote = readRemote(ctx, node, path, "websocket", false);
    return remote && name !== undefined ? { ...defaults, ...remote } : undefined;
  }
  if (node.url !== undefined)
    reader.fail(joinPath(path, "url"), 'does not apply to a stdio server; use "transport: websocket"');
  if (node.command === undefined) {
    return reader.fail(
      path,
      'is a stdio server and needs a "command": the program and its arguments, e.g. [npx, -y, "@modelcontextprotocol/server-memory"]',
    );
  }
  const commandPath = joinPath(path, "command");
  if (!Array.isArray(node.command)) {
    return reader.fail(
      commandPath,
      `must be a list holding the program and its arguments, e.g. [npx, -y, server], not ${describeValue(node.command)}`,
    );
  }
  const words = reader.stringList(node.command, commandPath);
  if (words === undefined) return undefined;
  const [command, ...args] = words;
  if (node.command.length === 0 || command === undefined) {
    return reader.fail(commandPath, "is empty; give the program and its arguments, e.g. [npx, -y, server]");
  }
  if (reader.probe(command).trim() === "") return reader.fail(joinPath(commandPath, 0), "must not be empty");
  if (name === undefined || words.length !== node.command.length) return undefined;
  return { ...defaults, transport: "stdio", command, args, env };
}
