import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** A server's tools as last seen running for real, kept for `mcplex serve --simulate`. */
export interface CachedToolList {
  server: string;
  savedAt: string;
  serverInfo?: { name: string; version: string };
  tools: Record<string, unknown>[];
}

/**
 * Where tool lists are cached: `MCPLEX_CACHE_DIR`, else `$XDG_CACHE_HOME/mcplex`, else
 * `~/.cache/mcplex`; lists are in its `tools/` folder, one `SERVER.json` each.
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCPLEX_CACHE_DIR) return env.MCPLEX_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "mcplex");
}

function listFile(cacheDir: string, server: string): string {
  return join(cacheDir, "tools", `${server}.json`);
}

/** Saves a server's tool list (written whole, then renamed: a reader never sees half a file). */
export function saveToolList(cacheDir: string, list: CachedToolList): void {
  const file = listFile(cacheDir, list.server);
  mkdirSync(join(cacheDir, "tools"), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(list, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

/** The cached tool list of a server, or `undefined` when there is none (or it cannot be read). */
export function loadToolList(cacheDir: string, server: string): CachedToolList | undefined {
  try {
    const list = JSON.parse(readFileSync(listFile(cacheDir, server), "utf8")) as CachedToolList;
    return Array.isArray(list.tools) ? list : undefined;
  } catch {
    return undefined;
  }
}
