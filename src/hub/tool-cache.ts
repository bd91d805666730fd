import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Tool } from "@modelcontextprotocol/client";
import { defaultSecretStorePath } from "../config/secret-store.js";
import type { ServerConfig } from "../config/types.js";
import { writeFileAtomic } from "../config/write-file-atomic.js";
import { connectionKey } from "./connection-key.js";

/** What the cache keeps of one tool: enough to show and describe it while its server is stopped. */
export type CachedTool = Pick<Tool, "name" | "description" | "inputSchema"> & { title?: string };

interface CacheEntry {
  /** A hash of the server's definition: a changed command or URL makes the entry stale. */
  definition: string;
  recordedAt: number;
  tools: CachedTool[];
}

interface CacheFile {
  version: 1;
  servers: Record<string, CacheEntry>;
}

/** `tool-cache.json` beside the secret store (`$MCPLEX_HOME`, else `$XDG_CONFIG_HOME/mcplex`, else `~/.config/mcplex`). */
export function defaultToolCachePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(defaultSecretStorePath(env)), "tool-cache.json");
}

/**
 * The tool lists of `available:` servers, recorded when they ran, so that their tools can be
 * shown while they are stopped. Kept in one JSON file (mode 0600, written by temp file and
 * rename). The definition is stored hashed: env values and headers may be secrets.
 */
export class ToolCache {
  readonly file: string | undefined;
  #entries: Map<string, CacheEntry> | undefined;
  #writing: Promise<void> = Promise.resolve();

  /** Without `file`, the cache lives in memory only. */
  constructor(file?: string) {
    this.file = file;
  }

  /** The tools recorded for `server`, unless its definition changed since. */
  async get(server: ServerConfig): Promise<{ tools: CachedTool[]; recordedAt: number } | undefined> {
    const entry = (await this.#load()).get(server.name);
    if (entry === undefined || entry.definition !== definitionHash(server)) return undefined;
    return { tools: entry.tools, recordedAt: entry.recordedAt };
  }

  /** Records `server`'s tools (and writes the file). A write that fails leaves the cache in memory. */
  async record(server: ServerConfig, tools: readonly Tool[], signal?: AbortSignal): Promise<void> {
    const entries = await this.#load();
    entries.set(server.name, {
      definition: definitionHash(server),
      recordedAt: Date.now(),
      tools: tools.map(cachedTool),
    });
    if (this.file === undefined) return;
    const file = this.file;
    const data: CacheFile = { version: 1, servers: Object.fromEntries(entries) };
    // One write at a time, each of the whole file as it is then.
    this.#writing = this.#writing.then(() =>
      signal?.aborted ? undefined : writeAtomically(file, `${JSON.stringify(data)}\n`).catch(() => {}),
    );
    await this.#writing;
  }

  async #load(): Promise<Map<string, CacheEntry>> {
    if (this.#entries !== undefined) return this.#entries;
    let loaded = new Map<string, CacheEntry>();
    if (this.file !== undefined) {
      // A missing or unreadable cache is an empty one: it only saves showing tools before a first run.
      const text = await readFile(this.file, "utf8").catch(() => undefined);
      loaded = text === undefined ? loaded : parseCache(text);
    }
    this.#entries ??= loaded;
    return this.#entries;
  }
}

function cachedTool(tool: Tool): CachedTool {
  const cached: CachedTool = { name: tool.name, inputSchema: tool.inputSchema };
  if (tool.title !== undefined) cached.title = tool.title;
  if (tool.description !== undefined) cached.description = tool.description;
  return cached;
}

function definitionHash(server: ServerConfig): string {
  return createHash("sha256").update(connectionKey(server)).digest("hex");
}

function parseCache(text: string): Map<string, CacheEntry> {
  try {
    const data = JSON.parse(text) as Partial<CacheFile>;
    if (data.version !== 1 || typeof data.servers !== "object" || data.servers === null) return new Map();
    const entries = new Map<string, CacheEntry>();
    for (const [name, entry] of Object.entries(data.servers)) {
      if (typeof entry?.definition === "string" && Array.isArray(entry.tools)) entries.set(name, entry);
    }
    return entries;
  } catch {
    return new Map();
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // A cache: losing the last write to a crash costs a refresh, not worth an fsync per write.
  await writeFileAtomic(file, text, { mode: 0o600, durable: false });
}
