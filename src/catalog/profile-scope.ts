import type { ProfileConfig } from "../config/types.js";
import { compileToolFilter, type NameMatcher } from "./tool-filter.js";
import { compileOverrides, type OverrideMatcher } from "./tool-overrides.js";
import type { CatalogTool } from "./types.js";

/** A profile's config, compiled once per {@link Catalog.setProfiles}. */
export interface CompiledProfile {
  servers: ReadonlySet<string> | undefined;
  tools: NameMatcher;
  /** Whether the tool globs select servers: only an `allow` list does. */
  toolsSelect: boolean;
  resources: NameMatcher;
  prompts: NameMatcher;
  /** The profile's `overrides:`, by glob over exposed names; absent when it has none. */
  overrides?: OverrideMatcher;
}

/** Compiles a profile's globs. */
export function compileProfile(profile: ProfileConfig): CompiledProfile {
  const overrides = compileOverrides(profile.overrides);
  return {
    ...(overrides === undefined ? {} : { overrides }),
    servers: profile.servers === undefined ? undefined : new Set(profile.servers),
    tools: compileToolFilter(profile.tools),
    toolsSelect: profile.tools.allow !== undefined,
    resources: compileToolFilter(profile.resources),
    prompts: compileToolFilter(profile.prompts),
  };
}

/**
 * What one profile may see and reach, over the catalog as it is now. Every listing and every
 * resolution of the catalog asks this one object, so no method or front can disagree on it.
 */
export interface ProfileScope {
  /** Whether the profile can use the server at all (see {@link scopeOf}). */
  server(server: string): boolean;
  /** `name` is the exposed tool name. */
  tool(server: string, name: string): boolean;
  /** `name` is the exposed prompt name. */
  prompt(server: string, name: string): boolean;
  /** `uri` is the server's own URI (not a qualified one), or a template's text. */
  resource(server: string, uri: string): boolean;
}

/** The scope of "no profile": everything. */
export const FULL_SCOPE: ProfileScope = {
  server: () => true,
  tool: () => true,
  prompt: () => true,
  resource: () => true,
};

/**
 * The scope of `profile` given every tool of the catalog (before any profile filtering).
 *
 * A profile reaches a server, and so its resources, templates and prompts, when:
 * - it has a `servers` list: the server is named in it (a server of resources only is reached
 *   this way);
 * - it has none but has a `tools.allow` list: at least one of the server's tools passes the tool
 *   globs, since a profile allowed `github__*` is about github, not about every server;
 * - it has neither: always (deny globs remove tools, they do not pick servers).
 *
 * Within the reached servers, `resources` globs (over the server's URIs and template texts) and
 * `prompts` globs (over exposed prompt names) narrow further.
 */
export function scopeOf(profile: CompiledProfile, tools: readonly CatalogTool[]): ProfileScope {
  let reached: ReadonlySet<string> | undefined = profile.servers;
  if (reached === undefined && profile.toolsSelect) {
    const withTools = new Set<string>();
    for (const t of tools) if (profile.tools(t.name)) withTools.add(t.server);
    reached = withTools;
  }
  const server = reached === undefined ? () => true : (s: string) => reached.has(s);
  return {
    server,
    tool: (s, name) => server(s) && profile.tools(name),
    prompt: (s, name) => server(s) && profile.prompts(name),
    resource: (s, uri) => server(s) && profile.resources(uri),
  };
}
