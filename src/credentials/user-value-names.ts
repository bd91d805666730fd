import type { ServerConfig } from "../config/types.js";

/** `${user:NAME}`: a value each user sets for themselves at the server's connect page. */
const USER_VALUE = /\$\{user:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The names of the `${user:NAME}` placeholders of a server (a stdio server's env and args, a
 * remote server's headers), sorted, each once: the fields of its connect page's form.
 */
export function userValueNames(server: ServerConfig): string[] {
  const texts: string[] = [];
  if (server.transport === "stdio") texts.push(server.command, ...server.args, ...Object.values(server.env));
  else if ("headers" in server) texts.push(...Object.values(server.headers));
  const names = new Set<string>();
  for (const text of texts) for (const match of text.matchAll(USER_VALUE)) names.add(match[1]!);
  return [...names].sort();
}
