import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where tool lists are cached: `MCPLEX_CACHE_DIR`, else `$MCPLEX_HOME/cache`, else
 * `$XDG_CACHE_HOME/mcplex`, else `~/.cache/mcplex`; lists are in its `tools/` folder, one
 * `SERVER.json` each. A file of its own: `mcplex serve` reads it before it starts its servers,
 * and the store's code (and node:crypto, for its temporary files) can then load after.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCPLEX_CACHE_DIR) return env.MCPLEX_CACHE_DIR;
  if (env.MCPLEX_HOME) return join(env.MCPLEX_HOME, "cache");
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mcplex");
}
