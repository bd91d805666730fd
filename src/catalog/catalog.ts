import type { ProfileConfig } from "../config/types.js";
import { ConfigError } from "../errors.js";
import { SKILLS_EXTENSION } from "../protocol/extensions.js";
import { buildCatalogIndex, type CatalogIndex } from "./catalog-index.js";
import { namespacedScheme, parseNamespacedUri } from "./namespaced-uris.js";
import {
  type CompiledProfile,
  compileProfile,
  FULL_SCOPE,
  type ProfileScope,
  scopeOf,
} from "./profile-scope.js";
import { parseQualifiedUri } from "./resource-routing.js";
import { createServerSlot, type ServerSlot, withState } from "./server-slot.js";
import { type ProfileTools, profileTools } from "./tool-overrides.js";
import type {
  CatalogCollision,
  CatalogOptions,
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
  ServerSnapshot,
  ServerState,
} from "./types.js";

interface Listings {
  tools: readonly CatalogTool[];
  /**
   * With the profile's overrides: every tool it reaches (listed or not), by the name the
   * profile shows, and the renames that could not be made.
   */
  overridden?: ProfileTools;
  /** {@link tools} less those only an MCP App calls, made on first use (the same array when none is). */
  modelTools?: readonly CatalogTool[];
  prompts: readonly CatalogPrompt[];
  resources: readonly CatalogResource[];
  resourceTemplates: readonly CatalogResourceTemplate[];
}

const NO_PROFILE = "\0all";

/**
 * The merged, namespaced view of the tools, resources, resource templates and prompts of many MCP
 * servers. Pure data: the hub feeds it server snapshots and asks it where names and URIs go.
 *
 * - Exposed names follow the rules of `tool-naming.ts` (symmetric collision handling, so a tool's
 *   name never changes because an unrelated server came or went).
 * - Names and URIs are assigned over all servers, whatever the profile, so a name means the same
 *   thing through every profile. Tools of unavailable servers keep their names and stay listed with
 *   `available: false` (unless `hideUnavailable`); they still resolve, so a call can fail fast with
 *   a clear "server unavailable" error instead of "unknown tool".
 * - A server's `filter` globs match original tool names; a profile's `tools` globs match exposed
 *   names (what the agent sees, e.g. `github__*`). A profile reaches the resources, templates and
 *   prompts of the servers it can use at all, narrowed by its `resources` and `prompts` globs
 *   ({@link scopeOf}); anything out of reach is listed nowhere and resolves to `undefined`, like a
 *   missing item, whatever the URI form.
 * - Every change marks the merged index stale; it is rebuilt on the next read in one linear pass
 *   over per-server caches ({@link ServerSlot}).
 *
 * @example
 * const catalog = Catalog.build([{ server: "github", state: "ready", tools }], { profiles });
 * const target = catalog.resolveTool("github__search_code", "reviewer");
 * if (target) await upstreams.get(target.server).callTool(target.originalName, args);
 */
export class Catalog {
  readonly #slots = new Map<string, ServerSlot>();
  readonly #hideUnavailable: boolean;
  readonly #rank: ReadonlyMap<string, number>;
  #profiles = new Map<string, CompiledProfile>();
  #index: CatalogIndex | undefined;
  #listings = new Map<string, Listings>();
  #scopes = new Map<string, ProfileScope>();
  #revision = 0;

  constructor(options: CatalogOptions = {}) {
    this.#hideUnavailable = options.hideUnavailable ?? false;
    this.#rank = new Map((options.serverOrder ?? []).map((name, i) => [name, i]));
    this.setProfiles(options.profiles ?? {});
  }

  /** A catalog holding `snapshots`; the order of `snapshots` does not matter. */
  static build(snapshots: Iterable<ServerSnapshot>, options?: CatalogOptions): Catalog {
    const catalog = new Catalog(options);
    for (const snapshot of snapshots) catalog.setServer(snapshot);
    return catalog;
  }

  /** Increases on every change; the gateway can compare it to decide on `list_changed`. */
  get revision(): number {
    return this.#revision;
  }

  /** Adds a server or replaces its listings, state, prefix and filter. */
  setServer(snapshot: ServerSnapshot): void {
    this.#slots.set(snapshot.server, createServerSlot(snapshot, this.#slots.get(snapshot.server)));
    this.#changed();
  }

  /** Marks a server ready or unavailable, keeping its last listings. `false` if it is unknown. */
  setServerState(server: string, state: ServerState): boolean {
    const slot = this.#slots.get(server);
    if (slot === undefined) return false;
    if (slot.state !== state) {
      this.#slots.set(server, withState(slot, state));
      this.#changed();
    }
    return true;
  }

  /** Removes a server and everything it listed. `false` if it was not there. */
  removeServer(server: string): boolean {
    const removed = this.#slots.delete(server);
    if (removed) this.#changed();
    return removed;
  }

  /** Replaces the profiles (after a config reload). */
  setProfiles(profiles: Record<string, ProfileConfig>): void {
    this.#profiles = new Map(Object.entries(profiles).map(([name, p]) => [name, compileProfile(p)]));
    this.#listings.clear();
    this.#scopes.clear();
    this.#revision++;
  }

  /** Names of the known servers, in server order. */
  servers(): string[] {
    return this.#ordered().map((s) => s.server);
  }

  /** Names of the defined profiles. */
  profiles(): string[] {
    return [...this.#profiles.keys()];
  }

  /**
   * Servers whose listings have outlived their `ttlMs` at `now` (epoch ms), in server order.
   * Servers without `listedAt` or `ttlMs` never go stale.
   */
  staleServers(now: number): string[] {
    return this.#ordered()
      .filter((s) => s.listedAt !== undefined && s.ttlMs !== undefined && now >= s.listedAt + s.ttlMs)
      .map((s) => s.server);
  }

  /** Tools visible through `profile` (all when omitted): server order, then listing order. */
  tools(profile?: string): readonly CatalogTool[] {
    return this.#list(profile).tools;
  }

  /**
   * The tools a model may see through `profile`: {@link tools} less those whose MCP Apps
   * `visibility` leaves out the model (`appOnly`), which only an app calls. The same array as
   * {@link tools} when there are none.
   */
  modelTools(profile?: string): readonly CatalogTool[] {
    const listings = this.#list(profile);
    listings.modelTools ??= listings.tools.some((t) => t.appOnly === true)
      ? listings.tools.filter((t) => t.appOnly !== true)
      : listings.tools;
    return listings.modelTools;
  }

  /** Prompts visible through `profile`, in server order then listing order. */
  prompts(profile?: string): readonly CatalogPrompt[] {
    return this.#list(profile).prompts;
  }

  /** Resources visible through `profile`, in server order then listing order. */
  resources(profile?: string): readonly CatalogResource[] {
    return this.#list(profile).resources;
  }

  /** Resource templates visible through `profile`, in server order then listing order. */
  resourceTemplates(profile?: string): readonly CatalogResourceTemplate[] {
    return this.#list(profile).resourceTemplates;
  }

  /**
   * Whether `profile` can use `server` at all: see its tools, or its resources, templates and
   * prompts (all when omitted). The dashboard shows a profile only these servers.
   *
   * @throws ConfigError when `profile` is not defined.
   */
  reaches(server: string, profile?: string): boolean {
    return this.#scope(profile).server(server);
  }

  /**
   * Where an exposed tool name goes; `undefined` when unknown or outside `profile`. Tools of
   * unavailable servers resolve (check `available`).
   *
   * @throws ConfigError when `profile` is not defined.
   */
  resolveTool(name: string, profile?: string): CatalogTool | undefined {
    // No profile reaches every tool: no scope to ask on the way of every call of a front bound to none.
    if (profile === undefined) return this.#view().toolsByName.get(name);
    const scope = this.#scope(profile);
    // Its overrides may rename: the profile's own names, made with its list.
    if (this.#profiles.get(profile)?.overrides !== undefined)
      return this.#list(profile).overridden?.byName.get(name);
    const tool = this.#view().toolsByName.get(name);
    return tool !== undefined && scope.tool(tool.server, tool.name) ? tool : undefined;
  }

  /**
   * The tool an MCP App means by `originalName`, its own server's name for it: apps call their
   * server's tools unprefixed, through a host that passes the name on as it is. Among the
   * servers that have apps (and that `profile` reaches), the one tool of that original name;
   * `undefined` when none has it or several do (a host that knows the app's server maps the
   * name itself, as the dashboard does).
   *
   * @throws ConfigError when `profile` is not defined.
   */
  resolveAppTool(originalName: string, profile?: string): CatalogTool | undefined {
    const scope = this.#scope(profile);
    const candidates = this.#view().appToolsByOriginalName.get(originalName);
    const reachable = candidates?.filter((t) => scope.tool(t.server, t.name));
    return reachable?.length === 1 ? reachable[0] : undefined;
  }

  /**
   * Where an exposed prompt name goes; `undefined` when unknown or outside `profile`.
   *
   * @throws ConfigError when `profile` is not defined.
   */
  resolvePrompt(name: string, profile?: string): CatalogPrompt | undefined {
    const scope = this.#scope(profile);
    const prompt = this.#view().promptsByName.get(name);
    return prompt !== undefined && scope.prompt(prompt.server, prompt.name) ? prompt : undefined;
  }

  /**
   * The resource template with exactly this text (a completion's `ref/resource`); `undefined`
   * when unknown or outside `profile`. The first in server order when several servers list it.
   *
   * @throws ConfigError when `profile` is not defined.
   */
  resolveResourceTemplate(uriTemplate: string, profile?: string): CatalogResourceTemplate | undefined {
    const scope = this.#scope(profile);
    return this.#view().resourceTemplates.find(
      (t) => t.uriTemplate === uriTemplate && scope.resource(t.server, t.resourceTemplate.uriTemplate),
    );
  }

  /**
   * Where a resource read goes. Tried in order: a listed URI (as exposed), a `skill://` or
   * `ui://` URI whose first segment names a server (`skill://<server>/...`, listed or not: skills
   * need not be listed), a qualified `mcplex://server/uri` naming a known server, a raw URI
   * listed by several servers (the first in server order), the resource templates in server and
   * listing order, and last a `skill://` or `ui://` URI no namespace claims, to the first server
   * with prefix `""` (whose URIs pass unchanged) that may serve it. Only servers and URIs in
   * `profile`'s reach take part, so a URI out of reach is as unknown as a missing one.
   *
   * @throws ConfigError when `profile` is not defined.
   */
  resolveResource(uri: string, profile?: string): ResourceTarget | undefined {
    const scope = this.#scope(profile);
    const index = this.#view();
    const listed = index.resourcesByUri.get(uri);
    if (listed !== undefined && scope.resource(listed.server, listed.originalUri))
      return this.#target(listed, listed.originalUri, "listed");
    const own = parseNamespacedUri(uri);
    const owner = own === undefined ? undefined : this.#slots.get(own.namespace);
    if (own !== undefined && owner?.namespace === own.namespace) {
      return scope.resource(owner.server, own.uri) ? this.#target(owner, own.uri, "namespaced") : undefined;
    }
    const qualified = parseQualifiedUri(uri);
    const slot = qualified === undefined ? undefined : this.#slots.get(qualified.server);
    if (qualified !== undefined && slot !== undefined && scope.resource(slot.server, qualified.uri)) {
      return this.#target(slot, qualified.uri, "qualified");
    }
    const shared = index.resourcesByOriginalUri.get(uri)?.find((r) => scope.resource(r.server, uri));
    if (shared !== undefined) return this.#target(shared, uri, "listed");
    const templates = index.resourceTemplates;
    for (let i = 0; i < templates.length; i++) {
      const t = templates[i]!;
      // A skill or app template of a namespaced server expands under its name (routed above).
      if (t.uriTemplate !== t.resourceTemplate.uriTemplate) continue;
      if (scope.resource(t.server, uri) && index.templateMatchers[i]!(uri))
        return this.#target(t, uri, "template");
    }
    const scheme = namespacedScheme(uri);
    if (scheme === undefined) return undefined;
    const passing = this.#ordered().find(
      (s) =>
        s.namespace === undefined &&
        scope.resource(s.server, uri) &&
        (scheme === "ui" || s.extensions?.[SKILLS_EXTENSION] !== undefined),
    );
    return passing === undefined ? undefined : this.#target(passing, uri, "namespaced");
  }

  /**
   * The servers that declared `extension` (`capabilities.extensions`) and that `profile` can
   * use, in server order, with what each declared.
   *
   * @throws ConfigError when `profile` is not defined.
   */
  extensionServers(
    extension: string,
    profile?: string,
  ): Array<{ server: string; settings: Record<string, unknown>; available: boolean }> {
    const scope = this.#scope(profile);
    const out: Array<{ server: string; settings: Record<string, unknown>; available: boolean }> = [];
    for (const slot of this.#ordered()) {
      const settings = slot.extensions?.[extension];
      if (settings === undefined || settings === null || !scope.server(slot.server)) continue;
      const shown = slot.state === "ready" || !this.#hideUnavailable;
      if (!shown) continue;
      out.push({
        server: slot.server,
        settings: typeof settings === "object" ? (settings as Record<string, unknown>) : {},
        available: slot.state === "ready",
      });
    }
    return out;
  }

  /**
   * Whether `profile` may read `uri` (the server's own URI) of `server`: the same check a
   * resource read makes, for entries the catalog does not list itself (skills).
   *
   * @throws ConfigError when `profile` is not defined.
   */
  allowsResource(server: string, uri: string, profile?: string): boolean {
    return this.#slots.has(server) && this.#scope(profile).resource(server, uri);
  }

  /**
   * The namespace `server`'s `skill://` and `ui://` URIs are shown in (its name), or `undefined`
   * when they pass as they are (prefix `""`) or the server is unknown.
   */
  uriNamespace(server: string): string | undefined {
    return this.#slots.get(server)?.namespace;
  }

  /**
   * Every collision in the catalog, whatever the profile, sorted by kind then name; then the
   * renames of profiles' overrides that took a name the profile already shows (not made).
   */
  collisions(): readonly CatalogCollision[] {
    const own = this.#view().collisions;
    const renames = [...this.#profiles]
      .filter(([, p]) => p.overrides !== undefined)
      .flatMap(([name]) => this.#list(name).overridden?.collisions ?? []);
    return renames.length === 0 ? own : [...own, ...renames];
  }

  #changed(): void {
    this.#index = undefined;
    this.#listings.clear();
    this.#scopes.clear();
    this.#revision++;
  }

  #ordered(): ServerSlot[] {
    const rank = (s: string) => this.#rank.get(s) ?? Number.POSITIVE_INFINITY;
    return [...this.#slots.values()].sort((a, b) => {
      const byRank = rank(a.server) - rank(b.server);
      if (byRank !== 0 && !Number.isNaN(byRank)) return byRank;
      return compare(a.server, b.server);
    });
  }

  #view(): CatalogIndex {
    if (this.#index === undefined) {
      const index = buildCatalogIndex(this.#ordered());
      index.collisions.sort((a, b) => compare(a.kind, b.kind) || compare(a.name, b.name));
      this.#index = index;
    }
    return this.#index;
  }

  #profile(name: string | undefined): CompiledProfile | undefined {
    if (name === undefined) return undefined;
    const profile = this.#profiles.get(name);
    if (profile !== undefined) return profile;
    const known = [...this.#profiles.keys()];
    throw new ConfigError(`Unknown profile "${name}"`, {
      path: `profiles.${name}`,
      hint: known.length === 0 ? "No profiles are defined." : `Defined profiles: ${known.join(", ")}.`,
    });
  }

  /** The profile's scope over the catalog as it is now; rebuilt after any change. */
  #scope(name: string | undefined): ProfileScope {
    const profile = this.#profile(name);
    if (name === undefined || profile === undefined) return FULL_SCOPE;
    let scope = this.#scopes.get(name);
    if (scope === undefined) {
      scope = scopeOf(profile, this.#view().tools);
      this.#scopes.set(name, scope);
    }
    return scope;
  }

  #list(profileName: string | undefined): Listings {
    const key = profileName ?? NO_PROFILE;
    const cached = this.#listings.get(key);
    if (cached !== undefined) return cached;
    const scope = this.#scope(profileName);
    const index = this.#view();
    const shown = (e: { available: boolean }) => e.available || !this.#hideUnavailable;
    const overrides = profileName === undefined ? undefined : this.#profiles.get(profileName)?.overrides;
    const overridden =
      overrides === undefined
        ? undefined
        : profileTools(
            index.tools.filter((t) => scope.tool(t.server, t.name)),
            overrides,
            profileName!,
          );
    const listings: Listings = {
      tools: (overridden?.tools ?? index.tools).filter(
        (t) => shown(t) && (overridden !== undefined || scope.tool(t.server, t.name)),
      ),
      prompts: index.prompts.filter((p) => shown(p) && scope.prompt(p.server, p.name)),
      resources: index.resources.filter((r) => shown(r) && scope.resource(r.server, r.originalUri)),
      resourceTemplates: index.resourceTemplates.filter(
        (t) => shown(t) && scope.resource(t.server, t.resourceTemplate.uriTemplate),
      ),
    };
    if (overridden !== undefined) listings.overridden = overridden;
    this.#listings.set(key, listings);
    return listings;
  }

  #target(
    entry: { server: string; available?: boolean; state?: ServerState },
    uri: string,
    via: ResourceTarget["via"],
  ): ResourceTarget {
    const available = entry.available ?? entry.state === "ready";
    const slot = this.#slots.get(entry.server);
    const t: ResourceTarget = { server: entry.server, uri, available, via };
    // Only where results may hold skill or app URIs: every other read passes untouched.
    if (slot?.namespace !== undefined && (slot.speaksUris || via === "namespaced"))
      t.namespace = slot.namespace;
    return t;
  }
}

/** Code-unit order: the same on every machine, unlike `localeCompare`. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
