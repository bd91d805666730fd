import { compileToolFilter, type NameMatcher } from "../catalog/tool-filter.js";
import type { CatalogTool } from "../catalog/types.js";
import type { CacheConfig, ToolCacheConfig } from "../config/types.js";
import type { CallRequest, Handler, Interceptor, JsonObject } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import { jsonOf } from "../protocol/raw-json.js";

/** Bounds of a {@link ResultCache}. */
export interface ResultCacheOptions {
  /** Results kept at most. Default 1000. */
  maxEntries?: number;
  /** Bytes of results (as JSON) kept at most. Default 64 MiB. */
  maxBytes?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** One server's cache counts. */
export interface CacheCounts {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

/** What a cache lookup found, for whoever counts it (metrics, dashboard). */
export type CacheLookup = { server: string; tool: string; hit: boolean };

interface Entry {
  server: string;
  result: JsonObject;
  bytes: number;
  storedAt: number;
  expiresAt: number;
}

/** Where an answer from the cache says so, with its age. */
export const CACHE_META = "mcplex/cache";

/**
 * Results of read-only tools reused for a while (`servers.NAME.cache`), as a layer of the
 * pipeline. The key is the tool, its arguments in canonical form (key order does not matter)
 * and the caller (token and profile), so one caller never sees another's result. Errors and
 * `input_required` results are never kept; a server's entries go when its lists change or it
 * restarts; past `maxEntries` or `maxBytes` the least recently used go first.
 */
export class ResultCache {
  readonly #hub: Hub;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  /** In least recently used order (a hit moves an entry to the end). */
  readonly #entries = new Map<string, Entry>();
  readonly #counts = new Map<string, CacheCounts>();
  readonly #policies = new WeakMap<CacheConfig, (tool: CatalogTool) => number | undefined>();
  /**
   * Each tool's ttl as {@link #ttl} decided it (`null`: never kept), by the catalog's object for
   * the tool. The catalog makes new ones whenever a server is added, removed or lists again, so
   * a tool's server config cannot change under its entry: a call reads it here, with no look-up
   * of the config and no matching of its `cache.tools` globs.
   */
  readonly #ttls = new WeakMap<CatalogTool, number | null>();
  readonly #watchers = new Set<(lookup: CacheLookup) => void>();
  readonly #offHub: () => void;
  #bytes = 0;

  constructor(hub: Hub, options: ResultCacheOptions = {}) {
    this.#hub = hub;
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.#now = options.now ?? Date.now;
    this.#offHub = hub.on((event) => {
      if (event.type === "catalog-changed") for (const server of event.servers) this.clear(server);
      else if (event.type === "server-state" && event.state !== "ready") this.clear(event.server);
    });
  }

  /**
   * The layer: answers a cacheable `tools/call` from the cache, or keeps what the server answered.
   * While no server is configured with `cache:` no call can be cached, and the layer is `next`
   * itself: off the path. A gateway composes it again whenever the servers change (see
   * `PipelineExtension`), so a server given `cache:` brings it back before its first call.
   */
  // Not async: a call that may not be cached passes straight to `next`, with no promise of this
  // layer's own on its way.
  readonly interceptor: Interceptor = interceptor({ needs: "raw" }, (next) =>
    this.#anyServerCaches() ? this.#layer(next) : next,
  );

  /** Whether a server is configured with `cache:` (read when the layer is composed, not per call). */
  #anyServerCaches(): boolean {
    return this.#hub.catalog.servers().some((server) => this.#hub.serverConfig(server)?.cache !== undefined);
  }

  #layer(next: Handler): Handler {
    return (request) => {
      if (request.method !== "tools/call") return next(request);
      const tool = request.target?.kind === "tool" ? request.target.tool : undefined;
      if (tool === undefined) return next(request);
      let ttl: number | undefined;
      try {
        ttl = this.#ttl(tool);
      } catch (error) {
        return Promise.reject(error);
      }
      // A 2026 retry carries the client's input for a call under way: never an answer to reuse.
      if (ttl === undefined || request.params.inputResponses !== undefined) return next(request);
      return this.#cached(request, tool, ttl, next);
    };
  }

  async #cached(request: CallRequest, tool: CatalogTool, ttl: number, next: Handler): Promise<JsonObject> {
    const { context } = request;
    const key = JSON.stringify([
      tool.server,
      tool.originalName,
      context.caller ?? "",
      // The signed-in user itself, whatever the caller key says: a per-user server's answer is
      // made with that user's credentials (or process), never another's to reuse.
      request.callOptions.user?.key ?? "",
      context.profile ?? "",
      canonical(request.params.arguments ?? {}),
    ]);
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expiresAt > now) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.#count(tool, true);
      const meta = (entry.result._meta as JsonObject | undefined) ?? {};
      return {
        ...entry.result,
        _meta: { ...meta, [CACHE_META]: { hit: true, ageMs: now - entry.storedAt } },
      };
    }
    if (entry !== undefined) this.#delete(key, entry);
    this.#count(tool, false);
    // What is kept is read again (its `_meta` on a hit): never a result kept as text.
    const result = jsonOf(await next(request));
    // Never a task (2026 `resultType: "task"`, 2025-11-25 `{ task }`): its handle is its caller's.
    if (
      result.isError !== true &&
      (result.resultType === undefined || result.resultType === "complete") &&
      result.task === undefined
    )
      this.#store(key, tool.server, result, now, ttl);
    return result;
  }

  /** Counts per server (servers with no lookup yet are absent). */
  counts(): ReadonlyMap<string, CacheCounts> {
    return this.#counts;
  }

  /** Calls `watcher` on each lookup of a cacheable call; returns the unsubscribe function. */
  watch(watcher: (lookup: CacheLookup) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  /** Drops `server`'s results (every result without `server`). */
  clear(server?: string): void {
    for (const [key, entry] of this.#entries)
      if (server === undefined || entry.server === server) this.#delete(key, entry);
  }

  /** Stops following the hub and drops every result. */
  close(): void {
    this.#offHub();
    this.clear();
  }

  /** How long `tool`'s results are kept, or `undefined` when they may not be. */
  #ttl(tool: CatalogTool): number | undefined {
    const known = this.#ttls.get(tool);
    if (known !== undefined) return known ?? undefined;
    const ttl = this.#decide(tool);
    this.#ttls.set(tool, ttl ?? null);
    return ttl;
  }

  /** {@link #ttl} from the config `tool`'s server runs with now. */
  #decide(tool: CatalogTool): number | undefined {
    const cache = this.#hub.serverConfig(tool.server)?.cache;
    if (cache === undefined) return undefined;
    let policy = this.#policies.get(cache);
    if (policy === undefined) {
      policy = cachePolicy(cache);
      this.#policies.set(cache, policy);
    }
    return policy(tool);
  }

  #store(key: string, server: string, result: JsonObject, now: number, ttl: number): void {
    const bytes = JSON.stringify(result).length;
    if (bytes > this.#maxBytes) return;
    const old = this.#entries.get(key);
    if (old !== undefined) this.#delete(key, old);
    this.#entries.set(key, { server, result, bytes, storedAt: now, expiresAt: now + ttl });
    this.#bytes += bytes;
    this.#countsOf(server).entries++;
    this.#countsOf(server).bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#delete(oldest, entry);
    }
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    const counts = this.#countsOf(entry.server);
    counts.entries--;
    counts.bytes -= entry.bytes;
  }

  #count(tool: CatalogTool, hit: boolean): void {
    const counts = this.#countsOf(tool.server);
    if (hit) counts.hits++;
    else counts.misses++;
    for (const watcher of this.#watchers) watcher({ server: tool.server, tool: tool.name, hit });
  }

  #countsOf(server: string): CacheCounts {
    let counts = this.#counts.get(server);
    if (counts === undefined) {
      counts = { hits: 0, misses: 0, entries: 0, bytes: 0 };
      this.#counts.set(server, counts);
    }
    return counts;
  }
}

/**
 * A server's `cache` as a function of its tools: the ttl, or `undefined` for a tool that may not
 * be cached (destructive, not read-only unless the config vouches for it, or turned off).
 */
export function cachePolicy(cache: CacheConfig): (tool: CatalogTool) => number | undefined {
  const rules: Array<[NameMatcher, ToolCacheConfig | false]> = Object.entries(cache.tools ?? {}).map(
    ([glob, rule]) => [compileToolFilter({ allow: [glob] }), rule],
  );
  return (tool) => {
    if (tool.annotations?.destructiveHint === true) return undefined;
    const rule = rules.find(([matches]) => matches(tool.originalName))?.[1];
    if (rule === false) return undefined;
    if (tool.annotations?.readOnlyHint !== true && rule?.readOnly !== true) return undefined;
    return rule?.ttl ?? cache.ttl;
  };
}

/** `value` as JSON with object keys sorted, so that `{a, b}` and `{b, a}` are one key. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
