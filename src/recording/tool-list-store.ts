import { readFileSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { writeFileAtomic } from "../storage/write-file-atomic.js";

/**
 * A server's tools as last seen running for real: what `mcplex serve --simulate` stands in with,
 * and what `available:` servers show while they are stopped.
 */
export interface StoredToolList {
  server: string;
  /** When the list was saved (ISO 8601). */
  savedAt: string;
  /**
   * A hash of the server's definition when saved (the hub's `definitionHash`): a reader that
   * needs the list of this very definition compares it. Absent in lists saved before it was kept.
   */
  definition?: string;
  serverInfo?: { name: string; version: string };
  /** The tools as the server listed them, secrets redacted. */
  tools: Record<string, unknown>[];
}

/** Options of {@link ToolListStore}. */
export interface ToolListStoreOptions {
  /** The cache directory (`defaultCacheDir()`, default-cache-dir.ts); without it, lists live in memory only. */
  dir?: string | undefined;
  /** Hides secrets in every string of a list before it is kept, in memory or on disk. */
  redact: (text: string) => string;
  /**
   * The one-file cache of `available:` servers' lists written before this store (a JSON
   * `{version: 1, servers: {NAME: {definition, recordedAt, tools}}}`), read where the directory
   * has no list of a server; never written.
   */
  legacyFile?: string | undefined;
}

/**
 * The last-seen tool list of every server, one JSON file per server in `DIR/tools/` (mode 0600,
 * written whole to a temporary file and renamed: a reader never sees half a file). The one
 * writer of those files: every list is redacted on its way in, and saving a list equal to the
 * one last saved writes nothing. A cache: a list that cannot be read is no list, and one that
 * cannot be written stays in memory.
 *
 * @example
 * const store = new ToolListStore({ dir: defaultCacheDir(), redact: (text) => hub.redact(text) });
 * await store.save({ server: "memory", tools });
 */
export class ToolListStore {
  readonly dir: string | undefined;
  readonly #redact: (text: string) => string;
  readonly #legacyFile: string | undefined;
  #legacy: Promise<Map<string, StoredToolList>> | undefined;
  /** Lists saved or read by this process, by server. */
  readonly #lists = new Map<string, StoredToolList>();
  /** What was last saved per server, without its time, to skip saving the same list again. */
  readonly #saved = new Map<string, string>();
  #writing: Promise<void> = Promise.resolve();

  constructor(options: ToolListStoreOptions) {
    this.dir = options.dir;
    this.#redact = options.redact;
    this.#legacyFile = options.legacyFile;
  }

  /** The list last saved for `server` (by this process, else on disk), or `undefined`. */
  async get(server: string): Promise<StoredToolList | undefined> {
    const known = this.#lists.get(server);
    if (known !== undefined) return known;
    const text =
      this.dir === undefined
        ? undefined
        : await readFile(toolListFile(this.dir, server), "utf8").catch(() => undefined);
    const list = (text === undefined ? undefined : parseToolList(text)) ?? (await this.#legacyList(server));
    if (list !== undefined && !this.#lists.has(server)) this.#lists.set(server, list);
    return this.#lists.get(server);
  }

  /**
   * Keeps `list` as `server`'s last-seen list, redacted, and writes its file (one write at a
   * time). Resolves when written; a write that fails leaves the list in memory.
   */
  async save(list: Omit<StoredToolList, "savedAt">, signal?: AbortSignal): Promise<void> {
    const kept = redactStrings({ ...list }, this.#redact);
    const same = JSON.stringify(kept);
    if (this.#saved.get(list.server) === same) return;
    this.#saved.set(list.server, same);
    const stored: StoredToolList = { ...kept, savedAt: new Date().toISOString() };
    this.#lists.set(list.server, stored);
    if (this.dir === undefined) return;
    const file = toolListFile(this.dir, list.server);
    const text = `${JSON.stringify(stored, null, 2)}\n`;
    this.#writing = this.#writing.then(() =>
      signal?.aborted ? undefined : writeWhole(file, text).catch(() => {}),
    );
    await this.#writing;
  }

  #legacyList(server: string): Promise<StoredToolList | undefined> {
    if (this.#legacyFile === undefined) return Promise.resolve(undefined);
    this.#legacy ??= readLegacy(this.#legacyFile, this.#redact);
    return this.#legacy.then((lists) => lists.get(server));
  }
}

/**
 * `server`'s list in `dir` read at once (for building a config, which is synchronous), or
 * `undefined` when there is none or it cannot be read.
 */
export function readToolList(dir: string, server: string): StoredToolList | undefined {
  try {
    return parseToolList(readFileSync(toolListFile(dir, server), "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * `DIR/tools/SERVER.json`. A name that is not a plain file name (a slash, a leading dot) is
 * percent-encoded, so that no server name reaches outside the folder.
 */
export function toolListFile(dir: string, server: string): string {
  const plain = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(server);
  const name = plain ? server : encodeURIComponent(server).replaceAll(".", "%2E");
  return join(dir, "tools", `${name}.json`);
}

function parseToolList(text: string): StoredToolList | undefined {
  try {
    const list = JSON.parse(text) as Partial<StoredToolList> | null;
    if (typeof list?.server !== "string" || !Array.isArray(list.tools)) return undefined;
    return list as StoredToolList;
  } catch {
    return undefined;
  }
}

async function readLegacy(
  file: string,
  redact: (text: string) => string,
): Promise<Map<string, StoredToolList>> {
  const lists = new Map<string, StoredToolList>();
  try {
    const data = JSON.parse(await readFile(file, "utf8")) as {
      version?: unknown;
      servers?: Record<string, { definition?: unknown; recordedAt?: unknown; tools?: unknown }>;
    };
    if (data.version !== 1 || typeof data.servers !== "object" || data.servers === null) return lists;
    for (const [server, entry] of Object.entries(data.servers)) {
      if (typeof entry?.definition !== "string" || !Array.isArray(entry.tools)) continue;
      const recordedAt = typeof entry.recordedAt === "number" ? entry.recordedAt : 0;
      // That file was written unredacted: its lists are redacted as they come in.
      lists.set(server, {
        server,
        savedAt: new Date(recordedAt).toISOString(),
        definition: entry.definition,
        tools: redactStrings(entry.tools as Record<string, unknown>[], redact),
      });
    }
  } catch {
    // A missing or unreadable old cache is an empty one.
  }
  return lists;
}

/** Every string of a JSON value (keys too) through `redact`. */
function redactStrings<T>(value: T, redact: (text: string) => string): T {
  if (typeof value === "string") return redact(value) as T;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[redact(key)] = redactStrings(item, redact);
  return out as T;
}

async function writeWhole(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // A cache: rebuilt when lost, so not worth an fsync.
  await writeFileAtomic(file, text, { mode: 0o600, durable: false });
}
