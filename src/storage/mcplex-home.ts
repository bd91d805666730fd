import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The directory of mcplex's own files (the secret store, its key file, the credential vault):
 * `$MCPLEX_HOME`, else `$XDG_CONFIG_HOME/mcplex`, else `~/.config/mcplex`.
 *
 * @example
 * join(mcplexHome(process.env), "secrets.enc");
 */
export function mcplexHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.MCPLEX_HOME) return env.MCPLEX_HOME;
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "mcplex");
}
