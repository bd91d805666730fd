import { joinPath } from "../config-issues.js";
import { type ReadContext, readRemote, readStdio, SERVER_DEFAULTS } from "../read-server.js";
import type { ServerConfig } from "../types.js";

/** `type` values seen in Claude Code, Cursor, VS Code and friends. */
const FOREIGN_TYPES = [
  "stdio",
  "http",
  "streamable-http",
  "streamableHttp",
  "sse",
  "ws",
  "websocket",
] as const;

/**
 * Reads one server of a Claude Desktop / Cursor `mcpServers` file or a VS Code `servers`
 * file. Keys those clients add (`disabled`, `autoApprove`, `alwaysAllow`, `envFile`, ...) are
 * tolerated; `disabled: true` turns the server off. Their `timeout` is not read: clients
 * disagree on its unit (Cline uses seconds).
 */
export function readForeignServer(ctx: ReadContext, name: string, value: unknown, path: string) {
  const { reader } = ctx;
  const node = reader.map(value, path);
  if (node === undefined) return undefined;
  const type = reader.choice(node.type ?? node.transport, joinPath(path, "type"), FOREIGN_TYPES);
  const disabled = reader.boolean(node.disabled, joinPath(path, "disabled")) ?? false;
  const enabled = reader.boolean(node.enabled, joinPath(path, "enabled")) ?? true;
  const common = {
    name,
    ...SERVER_DEFAULTS,
    enabled: enabled && !disabled,
    tools: {},
  };
  const urlKey = node.url === undefined && node.serverUrl !== undefined ? "serverUrl" : "url";
  if (type === "stdio" || (type === undefined && node.command !== undefined)) {
    const stdio = readStdio(ctx, node, path);
    return stdio && ({ ...common, ...stdio } satisfies ServerConfig);
  }
  if (node[urlKey] === undefined) {
    const need = type === undefined ? '"command" (stdio) or "url" (http, sse)' : `"url" (type ${type})`;
    return reader.fail(path, `needs ${need}`);
  }
  const transport =
    type === undefined
      ? undefined
      : type === "sse"
        ? "sse"
        : type === "ws" || type === "websocket"
          ? "websocket"
          : "streamable-http";
  const remote = readRemote(ctx, node, path, transport, true, urlKey);
  return remote && ({ ...common, ...remote } satisfies ServerConfig);
}
