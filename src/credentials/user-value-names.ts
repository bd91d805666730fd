import type { ServerConfig } from "../config/types.js";
import { userPlaceholderNames } from "../config/user-placeholders.js";

/**
 * The names of the `${user:NAME}` placeholders of a server (a stdio server's args and env, a
 * remote server's headers: where the hub fills them), sorted: the fields of its connect page's
 * form.
 */
export function userValueNames(server: ServerConfig): string[] {
  const texts =
    server.transport === "stdio"
      ? [...server.args, ...Object.values(server.env)]
      : server.transport === "streamable-http" ||
          server.transport === "sse" ||
          server.transport === "websocket"
        ? Object.values(server.headers)
        : [];
  return [...new Set(texts.flatMap(userPlaceholderNames))].sort();
}
