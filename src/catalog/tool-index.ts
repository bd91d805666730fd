/**
 * Full-text search over tool entries, for a catalog too big to send whole: a client (or the
 * agent loop) asks for tools by what they do and gets the few that fit.
 *
 * Ranking is MiniSearch's BM25 over weighted fields, with prefix and fuzzy matching; this module
 * decides what the fields hold and weigh, `tool-vocabulary.ts` how text becomes terms (see
 * docs/DESIGN.md, "Tool search").
 */
import MiniSearch, { type SearchResult } from "minisearch";
import { McplexError } from "../errors.js";
import { normalizeTerm, queryTerms, SYNONYMS, splitWords } from "./tool-vocabulary.js";

/**
 * What the index reads of a tool. A {@link CatalogTool} fits as it is; so does an agent's tool,
 * which has no server or original name.
 */
export interface IndexableTool {
  /** Exposed name (`github__search_issues`): the hit's identity. */
  name: string;
  server?: string;
  /** The name as the server listed it; the exposed name when absent. */
  originalName?: string;
  title?: string;
  description?: string;
  /** JSON Schema of the input: its parameter names and descriptions are indexed. */
  inputSchema?: object;
}

/** One search hit, best first. */
export interface ToolHit {
  /** Exposed name. */
  name: string;
  /** The tool's server; `""` for tools indexed without one. */
  server: string;
  /** First sentence or line of the description, at most {@link SUMMARY_LENGTH} characters. */
  description: string;
  /** Relevance (higher is better); `0` when the query had no searchable words. */
  score: number;
}

/** Options of a {@link ToolIndex}. */
export interface ToolIndexOptions {
  /**
   * For each query word, other words that search for the same thing. Default: the general
   * computing vocabulary of `tool-vocabulary.ts`; an empty map turns expansion off.
   */
  synonyms?: ReadonlyMap<string, readonly string[]>;
}

/** Options of {@link ToolIndex.search}. */
export interface ToolSearchOptions {
  /** Only tools of this server. */
  server?: string;
  /** Most hits to return. Default 10; at least 1. */
  limit?: number;
  /** Only tools whose exposed name passes (a profile's view, say). */
  filter?: (exposedName: string) => boolean;
}

/** Longest {@link ToolHit.description}. */
export const SUMMARY_LENGTH = 120;

const DEFAULT_LIMIT = 10;

/** Score factor of the tools of a server the query names. */
const NAMED_SERVER_BOOST = 2;

interface Entry {
  name: string;
  server: string;
  summary: string;
}

/** One MiniSearch document per tool; `id` is the exposed name. */
interface Doc {
  id: string;
  server: string;
  tool: string;
  title: string;
  summary: string;
  description: string;
  params: string;
}

const FIELDS = ["tool", "title", "summary", "description", "params"] as const;

/**
 * Field weights. `tool` holds the server's and the tool's names: a word there says most about a
 * tool. Its title and the first sentence of its description (which usually states the purpose)
 * come next, the rest of the description after; parameter names and descriptions last (they are
 * many, and shared by tools that do different things with the same path or id).
 */
const BOOST: Record<(typeof FIELDS)[number], number> = {
  tool: 3,
  title: 2,
  summary: 2,
  description: 1,
  params: 0.5,
};

/**
 * A searchable index of tools, kept per server so one server's `list_changed` re-indexes only
 * that server.
 *
 * @example
 * const index = new ToolIndex(catalog.tools());
 * index.search("open bugs about login", { limit: 5 });
 * // [{ name: "github__search_issues", server: "github", description: "Search for issues ...", score: 12.3 }, ...]
 * index.update("github", nextGithubTools);
 */
export class ToolIndex {
  readonly #search: MiniSearch<Doc>;
  readonly #synonyms: ReadonlyMap<string, readonly string[]>;
  /** Entries by server, each in listing order; servers in the order first indexed. */
  readonly #servers = new Map<string, Map<string, Entry>>();
  /** Which server indexed each exposed name. */
  readonly #owner = new Map<string, string>();

  /** An index of `tools`; tools without `server` are indexed under `""`. */
  constructor(tools: Iterable<IndexableTool> = [], options: ToolIndexOptions = {}) {
    this.#synonyms = options.synonyms ?? SYNONYMS;
    this.#search = new MiniSearch<Doc>({
      fields: [...FIELDS],
      storeFields: ["server"],
      tokenize: splitWords,
      processTerm: normalizeTerm,
      searchOptions: {
        boost: BOOST,
        // Queries arrive as terms already processed by queryTerms().
        processTerm: (term) => term,
        prefix: (term) => term.length >= 3,
        fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
        maxFuzzy: 2,
      },
    });
    const byServer = new Map<string, IndexableTool[]>();
    for (const tool of tools) {
      const server = tool.server ?? "";
      const list = byServer.get(server);
      if (list === undefined) byServer.set(server, [tool]);
      else list.push(tool);
    }
    for (const [server, list] of byServer) this.update(server, list);
  }

  /** How many tools are indexed. */
  get size(): number {
    return this.#owner.size;
  }

  /**
   * Replaces everything indexed for `server` with `tools` (after its `list_changed`); the tools'
   * own `server` is ignored. A name another server indexed moves to this one.
   */
  update(server: string, tools: Iterable<IndexableTool>): void {
    // Map.set on the existing key below keeps the server's place in browsing order.
    for (const name of this.#servers.get(server)?.keys() ?? []) this.#forget(server, name);
    const entries = new Map<string, Entry>();
    const docs: Doc[] = [];
    for (const tool of tools) {
      if (entries.has(tool.name)) continue;
      const other = this.#owner.get(tool.name);
      if (other !== undefined) this.#forget(other, tool.name);
      entries.set(tool.name, { name: tool.name, server, summary: summarize(tool.description) });
      this.#owner.set(tool.name, server);
      docs.push(toDoc(tool, server));
    }
    this.#servers.set(server, entries);
    this.#search.addAll(docs);
  }

  /** Drops every tool of `server`. `false` if none was indexed. */
  remove(server: string): boolean {
    const entries = this.#servers.get(server);
    if (entries === undefined) return false;
    for (const name of entries.keys()) {
      this.#search.discard(name);
      this.#owner.delete(name);
    }
    this.#servers.delete(server);
    return true;
  }

  /**
   * The tools that best match `query`, best first. A query with no
   * searchable word returns the first tools in indexing order, so an empty search browses.
   *
   * @throws McplexError `INVALID_ARGUMENT` when `query` is not a string or `limit` not a number.
   */
  search(query: string, options: ToolSearchOptions = {}): ToolHit[] {
    if (typeof query !== "string") {
      throw new McplexError("INVALID_ARGUMENT", `A tool search query must be a string, not ${typeof query}`, {
        hint: 'Describe the task in words, e.g. "open issues about login".',
      });
    }
    if (options.limit !== undefined && !Number.isFinite(options.limit)) {
      throw new McplexError(
        "INVALID_ARGUMENT",
        `A tool search limit must be a number, not ${options.limit}`,
        {
          hint: `Pass a positive integer, or leave it out for ${DEFAULT_LIMIT}.`,
        },
      );
    }
    const limit = Math.max(1, Math.floor(options.limit ?? DEFAULT_LIMIT));
    const { server, filter } = options;
    const passes = (name: string, owner: string) =>
      (server === undefined || owner === server) && (filter === undefined || filter(name));
    const terms = queryTerms(query, this.#synonyms);
    if (terms.size === 0) return this.#browse(limit, passes);
    const named = this.#namedServers(query);
    const results = this.#search.search([...terms.keys()].join(" "), {
      boostTerm: (term) => terms.get(term) ?? 1,
      ...(named.size > 0 && {
        boostDocument: (_id: unknown, _term: string, stored?: Record<string, unknown>) =>
          named.has(stored?.server as string) ? NAMED_SERVER_BOOST : 1,
      }),
      filter: (result: SearchResult) => passes(result.id as string, result.server as string),
    });
    return results.slice(0, limit).map((result) => {
      const entry = this.#servers.get(result.server as string)!.get(result.id as string)!;
      return { name: entry.name, server: entry.server, description: entry.summary, score: result.score };
    });
  }

  /**
   * The servers a query names: by their first word (`chrome` for `chrome_devtools`), or by a
   * prefix of five letters or more of a one-word name (`mongo` for `mongodb`).
   */
  #namedServers(query: string): Set<string> {
    const words = new Set(splitWords(query).map((w) => w.toLowerCase()));
    const named = new Set<string>();
    for (const server of this.#servers.keys()) {
      const parts = splitWords(server).map((w) => w.toLowerCase());
      const first = parts[0];
      if (first === undefined) continue;
      if (words.has(first)) named.add(server);
      else if (parts.length === 1 && first.length > 5) {
        for (const word of words) if (word.length >= 5 && first.startsWith(word)) named.add(server);
      }
    }
    return named;
  }

  #browse(limit: number, passes: (name: string, server: string) => boolean): ToolHit[] {
    const hits: ToolHit[] = [];
    for (const entries of this.#servers.values()) {
      for (const entry of entries.values()) {
        if (hits.length === limit) return hits;
        if (passes(entry.name, entry.server))
          hits.push({ name: entry.name, server: entry.server, description: entry.summary, score: 0 });
      }
    }
    return hits;
  }

  #forget(server: string, name: string): void {
    this.#servers.get(server)?.delete(name);
    this.#search.discard(name);
    this.#owner.delete(name);
  }
}

function toDoc(tool: IndexableTool, server: string): Doc {
  return {
    id: tool.name,
    server,
    tool: `${server} ${tool.originalName ?? tool.name}`,
    title: tool.title ?? "",
    summary: summarize(tool.description),
    description: tool.description ?? "",
    params: paramText(tool.inputSchema),
  };
}

/** Parameter names and descriptions, one level of nesting deep (objects and arrays of objects). */
function paramText(schema: unknown, depth = 0): string {
  const properties = isObject(schema) ? schema.properties : undefined;
  if (!isObject(properties)) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    parts.push(key);
    if (!isObject(value)) continue;
    if (typeof value.description === "string") parts.push(value.description);
    if (depth < 1) parts.push(paramText(isObject(value.items) ? value.items : value, depth + 1));
  }
  return parts.join(" ");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The first sentence of the first line that says something (headings such as `Purpose:` and
 * list markers skipped), at most {@link SUMMARY_LENGTH} characters, cut at a word boundary with
 * an ellipsis.
 *
 * @example summarize("Search issues. Uses the search API.") // "Search issues."
 */
export function summarize(description: string | undefined): string {
  for (const raw of (description ?? "").split(/\r?\n/)) {
    const line = raw
      .replace(/\s+/g, " ")
      .trim()
      .replace(/^(?:[-*•]|\d+[.)])\s+/u, "");
    if (line === "" || isHeading(line)) continue;
    const sentence = /^.*?[.!?](?=\s+\p{Lu}|\s*$)/su.exec(line)?.[0] ?? line;
    if (sentence.length <= SUMMARY_LENGTH) return sentence;
    const cut = sentence.slice(0, SUMMARY_LENGTH - 1);
    const space = cut.lastIndexOf(" ");
    return `${(space > SUMMARY_LENGTH / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
  }
  return "";
}

/** `Purpose:`, `🎯 Purpose`: a short line that ends in a colon or starts with a pictograph. */
function isHeading(line: string): boolean {
  return line.split(" ").length <= 4 && (line.endsWith(":") || /^\p{Extended_Pictographic}/u.test(line));
}
