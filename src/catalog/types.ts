/**
 * Data shapes of the catalog: what goes in (one snapshot per server) and what comes out (entries,
 * routing targets, collision records).
 */

import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ProfileConfig, ToolFilter, ToolOverrideConfig } from "../config/types.js";

/** Whether a server's listings can currently be used. */
export type ServerState = "ready" | "unavailable";

/**
 * Everything the catalog knows about one server: its naming/filter config and its last listings.
 * The hub builds one after listing a server (or when it fails, keeping the last known listings).
 */
export interface ServerSnapshot {
  /** Server name as configured; unique within the catalog. */
  server: string;
  /** Name prefix; `undefined` means the server name, `""` means no prefix. */
  prefix?: string;
  /** Per-server allow/deny globs, matched against the tools' original names. */
  filter?: ToolFilter;
  /** The server's `overrides:`, by glob over its tools' own names. */
  overrides?: Record<string, ToolOverrideConfig>;
  state: ServerState;
  tools: readonly Tool[];
  resources?: readonly Resource[];
  resourceTemplates?: readonly ResourceTemplate[];
  prompts?: readonly Prompt[];
  /** When the listings were fetched (epoch ms). */
  listedAt?: number;
  /** How long the listings may be cached (the list results' `ttlMs`, MCP 2026-07-28). */
  ttlMs?: number;
  /**
   * The extensions the server declared (`capabilities.extensions`: skills, MCP Apps), as last
   * seen; kept from the previous snapshot while the server is not connected.
   */
  extensions?: Record<string, unknown>;
}

/** Options of a {@link Catalog}. */
export interface CatalogOptions {
  /** Profiles by name (from the config). */
  profiles?: Record<string, ProfileConfig>;
  /** Leave tools/prompts/resources of unavailable servers out of listings. Default `false`. */
  hideUnavailable?: boolean;
  /**
   * Listing order of servers, usually the config order. Servers not named here come after, by
   * name. Default: by name.
   */
  serverOrder?: readonly string[];
}

/** A tool as the catalog exposes it. */
export interface CatalogTool {
  /** Exposed name, always matching `^[A-Za-z0-9_-]{1,64}$`. */
  name: string;
  originalName: string;
  server: string;
  title?: string;
  description?: string;
  inputSchema: Tool["inputSchema"];
  outputSchema?: Tool["outputSchema"];
  annotations?: Tool["annotations"];
  /** `false` while the server is unavailable: calls should fail fast. */
  available: boolean;
  /** The tool exactly as the server listed it. */
  tool: Tool;
  /**
   * The tool's `_meta` as clients see it, when it differs from the server's: an app's `ui://`
   * URI namespaced (`_meta.ui.resourceUri` and the older `_meta["ui/resourceUri"]`).
   */
  meta?: Record<string, unknown>;
  /**
   * An MCP Apps tool whose `_meta.ui.visibility` leaves out `"model"`: its app calls it, a
   * model never sees it (not listed to clients that render no apps, nor in search, code mode
   * or the agent loop).
   */
  appOnly?: true;
  /**
   * The namespace of the server's `skill://` and `ui://` URIs, when its results may carry
   * some (it speaks an extension): call results are rewritten with it.
   */
  uriNamespace?: string;
  /**
   * Its name among its server's tools as clients see it, when an override renamed it (code
   * mode's `tools.<server>.<name>`); else its {@link originalName}.
   */
  localName?: string;
  /**
   * Arguments an override fixed (hidden from the client, always sent) or defaulted (sent when
   * the client gives none): see `tool-overrides.ts`.
   */
  argumentOverrides?: { fixed?: Record<string, unknown>; defaults?: Record<string, unknown> };
  /** The tool as clients list it, when an override changed it (see `listedTool`). */
  listed?: Tool;
}

/** A prompt as the catalog exposes it. */
export interface CatalogPrompt {
  /** Exposed name, always matching `^[A-Za-z0-9_-]{1,64}$`. */
  name: string;
  originalName: string;
  server: string;
  title?: string;
  description?: string;
  arguments?: Prompt["arguments"];
  available: boolean;
  /** The prompt exactly as the server listed it. */
  prompt: Prompt;
  /** The namespace of the server's `skill://` and `ui://` URIs, when its messages may carry some. */
  uriNamespace?: string;
}

/** A resource as the catalog exposes it. */
export interface CatalogResource {
  /** Exposed URI: the original one, or its qualified form when several servers list it. */
  uri: string;
  originalUri: string;
  server: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  available: boolean;
  /** The resource exactly as the server listed it. */
  resource: Resource;
}

/** A resource template as the catalog exposes it (templates keep their text, but for skill and app ones). */
export interface CatalogResourceTemplate {
  /** As clients see it: the server's text, with a `skill://` or `ui://` one under the server's name. */
  uriTemplate: string;
  server: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  available: boolean;
  /** The template exactly as the server listed it. */
  resourceTemplate: ResourceTemplate;
}

/** Where a resource read goes, and why. */
export interface ResourceTarget {
  server: string;
  /** The URI to send to that server (the original one). */
  uri: string;
  available: boolean;
  /**
   * `listed`: a listed resource; `qualified`: a `mcplex://` URI; `namespaced`: a `skill://` or
   * `ui://` URI naming its server; `template`: matched a template.
   */
  via: "listed" | "qualified" | "namespaced" | "template";
  /** The namespace of the server's `skill://` and `ui://` URIs, to rewrite results with. */
  namespace?: string;
}

/** What kind of entry a collision is about. */
export type CollisionKind = "tool" | "prompt" | "resource" | "resourceTemplate";

/**
 * Entries that wanted the same exposed name or URI. Never fatal: tools and prompts take hashed
 * names, resources take qualified URIs, duplicate templates route to the first server in order.
 */
export interface CatalogCollision {
  kind: CollisionKind;
  /** The contested name, URI or template. */
  name: string;
  members: Array<{ server: string; originalName: string; exposedName: string }>;
}
