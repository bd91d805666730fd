import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ToolOverrideConfig } from "../config/types.js";
import { namespacedScheme } from "./namespaced-uris.js";
import { compileUriTemplate, type UriTemplateMatcher } from "./resource-routing.js";
import { compileToolFilter } from "./tool-filter.js";
import { type NameCandidate, plainName } from "./tool-naming.js";
import { compileOverrides, renameOf } from "./tool-overrides.js";
import type { ServerSnapshot, ServerState } from "./types.js";

/**
 * The catalog's per-server cache: a snapshot already filtered, de-duplicated and prepared for
 * naming (plain names computed, hashes memoised, templates compiled), so that merging all servers
 * again after one of them changed is a linear pass with no hashing or glob compiling.
 */
export interface ServerSlot {
  readonly server: string;
  readonly state: ServerState;
  readonly listedAt: number | undefined;
  readonly ttlMs: number | undefined;
  readonly tools: ReadonlyArray<{
    readonly tool: Tool;
    readonly candidate: NameCandidate;
    /** The server's `overrides:` entries that apply to it, in order; absent when none does. */
    readonly overrides?: readonly ToolOverrideConfig[];
  }>;
  readonly prompts: ReadonlyArray<{ readonly prompt: Prompt; readonly candidate: NameCandidate }>;
  readonly resources: readonly Resource[];
  readonly templates: ReadonlyArray<{
    readonly template: ResourceTemplate;
    readonly match: UriTemplateMatcher;
  }>;
  /** The extensions the server declared, as last seen. */
  readonly extensions: Record<string, unknown> | undefined;
  /**
   * The first segment its `skill://` and `ui://` URIs get (see `namespaced-uris.ts`): the
   * server's name, or `undefined` for a server with prefix `""`, whose URIs pass as they are.
   */
  readonly namespace: string | undefined;
  /**
   * Whether its results may carry `skill://` or `ui://` URIs to rewrite: it declares an
   * extension, lists such resources, or has a tool with an app.
   */
  readonly speaksUris: boolean;
}

function firstBy<T>(items: readonly T[] | undefined, key: (item: T) => string): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const item of items ?? []) {
    const k = key(item);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(item);
  }
  return out;
}

function candidates<T extends { name: string }>(
  server: string,
  prefix: string,
  items: readonly T[],
  previous: ReadonlyArray<{ candidate: NameCandidate }> | undefined,
  rename: (item: T) => string = (item) => item.name,
): Array<{ item: T; candidate: NameCandidate }> {
  // Hashes depend on (server, name) only, so they survive a re-listing or a prefix change.
  const hashes = new Map<string, string>();
  for (const p of previous ?? [])
    if (p.candidate.hash !== undefined) hashes.set(p.candidate.originalName, p.candidate.hash);
  return items.map((item) => {
    const candidate: NameCandidate = {
      server,
      originalName: item.name,
      plain: plainName(prefix, rename(item)),
    };
    const hash = hashes.get(item.name);
    if (hash !== undefined) candidate.hash = hash;
    return { item, candidate };
  });
}

/**
 * Prepares a snapshot. A server listing the same tool/prompt name or resource URI/template twice
 * keeps the first. Tools denied by the server's filter (matched against the original name) are
 * dropped here and take no part in naming. `previous` is the server's former slot, whose memoised
 * hashes are reused.
 */
export function createServerSlot(snapshot: ServerSnapshot, previous?: ServerSlot): ServerSlot {
  const { server } = snapshot;
  const prefix = snapshot.prefix ?? server;
  const visible = compileToolFilter(snapshot.filter);
  const overrides = compileOverrides(snapshot.overrides) ?? (() => []);
  const tools = firstBy(snapshot.tools, (t) => t.name).filter((t) => visible(t.name));
  const prompts = firstBy(snapshot.prompts, (p) => p.name);
  const resources = firstBy(snapshot.resources, (r) => r.uri);
  const extensions = snapshot.extensions ?? previous?.extensions;
  const namespace = prefix === "" ? undefined : server;
  const speaksUris =
    namespace !== undefined &&
    ((extensions !== undefined && Object.keys(extensions).length > 0) ||
      resources.some((r) => namespacedScheme(r.uri) !== undefined) ||
      tools.some((t) => t._meta?.ui !== undefined || t._meta?.["ui/resourceUri"] !== undefined));
  return {
    server,
    state: snapshot.state,
    listedAt: snapshot.listedAt,
    ttlMs: snapshot.ttlMs,
    tools: candidates(
      server,
      prefix,
      tools,
      previous?.tools,
      (t) => renameOf(overrides(t.name)) ?? t.name,
    ).map(({ item, candidate }) => {
      const applying = overrides(item.name);
      return applying.length === 0
        ? { tool: item, candidate }
        : { tool: item, candidate, overrides: applying };
    }),
    prompts: candidates(server, prefix, prompts, previous?.prompts).map(({ item, candidate }) => ({
      prompt: item,
      candidate,
    })),
    resources,
    templates: firstBy(snapshot.resourceTemplates, (t) => t.uriTemplate).map((template) => ({
      template,
      match: compileUriTemplate(template.uriTemplate),
    })),
    extensions,
    namespace,
    speaksUris,
  };
}

/** The same slot with another state; nothing is recomputed. */
export function withState(slot: ServerSlot, state: ServerState): ServerSlot {
  return { ...slot, state };
}
