import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import { Catalog } from "../catalog/catalog.js";
import { namespaceUri } from "../catalog/namespaced-uris.js";
import { ownersOfName } from "../catalog/tool-naming.js";
import type {
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
  ServerSnapshot,
} from "../catalog/types.js";
import { isPerUser } from "../config/read-credentials.js";
import { SecretSet } from "../config/redact.js";
import type { ProfileConfig, ServerConfig, UsersConfig } from "../config/types.js";
import type { CredentialVault, UserConnectionPlan, UserRef } from "../credentials/user-credentials.js";
import { McplexError, NotFoundError } from "../errors.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ListKind } from "../protocol/list-changes.js";
import type { SkillEntry } from "../protocol/skills.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import { Upstream, type UpstreamEvent } from "../upstream/upstream.js";
import { type AvailableServer, AvailableServers } from "./available-servers.js";
import { CallPath, type ServerEntry } from "./call-path.js";
import type { CallRequest, Interceptor, JsonObject } from "./call-pipeline.js";
import { ClientConnections } from "./client-connections.js";
import { disabledServer, notFound } from "./hub-errors.js";
import type { CallOptions, HubEvent, HubOptions, ServerDetails, ServerStatus } from "./hub-types.js";
import { PerUserServers } from "./per-user-servers.js";
import { PinnedTools } from "./pinned-tools.js";
import type { PipelineExtension, PipelineExtensionOptions } from "./pipeline-extension.js";
import { RefCounts } from "./ref-counts.js";
import { ServerRequestRouter } from "./server-request-router.js";
import { serverSnapshot, serverStatus } from "./server-status.js";
import { listSkills, type SkillsPage } from "./skill-listing.js";
import {
  type HubSkill,
  type LoadedSkill,
  type LoadSkillOptions,
  loadSkill,
  readSkillFile,
} from "./skill-reader.js";
import { waitForOwners } from "./starting-owners.js";
import { hubToolLists } from "./tool-lists.js";
import { UpstreamPool } from "./upstream-pool.js";

const ALL_KINDS: ListKind[] = ["tools", "resources", "resourceTemplates", "prompts"];
/** Most pages {@link Hub.skills} reads (the bound of every list the hub reads whole). */
const MAX_SKILL_PAGES = 1000;

type Entry = ServerEntry;

/**
 * Many MCP servers behind one catalog. Servers start concurrently, each on its own
 * timeout; one that fails never delays or breaks the others.
 *
 * @example
 * const hub = new Hub({ config: await loadConfig() });
 * await hub.start();
 * const result = await hub.callTool("github__search_issues", { q: "bug" }, { timeout: 10_000 });
 * await hub.close();
 */
export class Hub {
  readonly #options: HubOptions;
  readonly #catalog: Catalog;
  readonly #entries = new Map<string, Entry>();
  /** Upstreams shared by identical server definitions, by connection key. */
  readonly #pool: UpstreamPool;
  /** Connections of `share: false` servers, one per client session. */
  readonly #own: ClientConnections;
  readonly #listeners = new Set<(event: HubEvent) => void>();
  /** Sends server requests to the call that caused them. */
  readonly #router = new ServerRequestRouter(() => this.#options.onServerRequest);
  /** Resource subscriptions by `server\0uri`, counted. */
  readonly #subscriptions = new RefCounts<string>();
  #closed = false;
  /** What {@link redact} hides: the config's secrets, and those of every reload since. */
  readonly #secrets: SecretSet;
  readonly #redactor = (text: string): string => this.redact(text);
  /** The `available:` servers, started on request. */
  readonly #available: AvailableServers;
  /** The last-seen tool list of each server (see `HubOptions.toolCache`), redacted by {@link redact}. */
  readonly toolLists: ToolListStore;
  #profiles: Record<string, ProfileConfig>;
  /** Whether each upstream was last published as available (see `Upstream.available`). */
  readonly #availability = new WeakMap<Upstream, boolean>();
  /** What calls do with the servers: the interceptors, dispatch, retries, redaction. */
  readonly #calls: CallPath;
  /** Pinned servers' tools held out of the catalog, and their changes (see `HubOptions.pins`). */
  readonly #pinned: PinnedTools;
  /** Servers called with each signed-in user's own credentials: their connections and tools. */
  readonly #perUser: PerUserServers;
  /** The `users:` bounds now (a reloaded config replaces them; see {@link setUsers}). */
  #users: UsersConfig | undefined;

  constructor(options: HubOptions) {
    this.#options = options;
    const { config } = options;
    this.#pinned = new PinnedTools(options.pins, (server, changes) =>
      this.#emit({ type: "pin-changes", server, changes }),
    );
    this.#secrets = new SecretSet(config.secrets);
    this.#pool = new UpstreamPool((server) =>
      this.#createUpstream(server, (upstream, event) => this.#onUpstreamEvent(upstream, event)),
    );
    this.#own = new ClientConnections((server) => this.#createUpstream(server, undefined));
    this.#users = config.users;
    this.toolLists = hubToolLists(options.toolCache, (config.available ?? []).length > 0, this.#redactor);
    this.#perUser = new PerUserServers(
      {
        createUpstream: (server, plan, onEvent, redact) =>
          this.#createUpstream(server, onEvent, plan, redact),
        users: () => this.#users,
        toolsChanged: (server, user) =>
          this.#emit({ type: "catalog-changed", servers: [server], kinds: ["tools"], user }),
        configs: () => [...this.#entries.values()].map((e) => e.config).filter((c) => isPerUser(c)),
        catalogOptions: () => ({ profiles: this.#profiles, serverOrder: [...this.#entries.keys()] }),
        revision: () => this.#catalog.revision,
        pinned: (config, snapshot, listedAt) => this.#pinned.filter(config, snapshot, listedAt),
        secrets: this.#secrets,
        emit: (event) => this.#emit(event),
      },
      {
        ...(options.vault === undefined ? {} : { vault: options.vault }),
        ...(options.userCredentials === undefined ? {} : { source: options.userCredentials }),
        ...(options.connectUrl === undefined ? {} : { connectUrl: options.connectUrl }),
      },
    );
    this.#catalog = new Catalog({
      profiles: config.profiles,
      hideUnavailable: options.hideUnavailable ?? false,
      serverOrder: config.servers.map((s) => s.name),
    });
    for (const server of config.servers) this.#add(server);
    const hub = this;
    this.#calls = new CallPath(
      {
        catalog: this.#catalog,
        entry: (name) => this.#entry(name),
        findTool: (name, o) => this.findTool(name, o),
        own: this.#own,
        perUser: this.#perUser,
        router: this.#router,
        get onServerRequest() {
          return hub.#options.onServerRequest;
        },
        clientCapabilities: options.clientCapabilities,
        redactor: this.#redactor,
      },
      options.interceptors,
      options.upstreamInterceptors,
    );
    this.#profiles = config.profiles;
    this.#available = new AvailableServers(config.available ?? [], this.toolLists, {
      has: (name) => this.#entries.has(name),
      start: async (server) => {
        const entry = this.#add(server);
        this.#publish(server.name);
        // A per-user server has nothing shared to start: each user's call opens theirs.
        if (!isPerUser(server)) await entry.upstream.start();
      },
      remove: (name) => this.removeServer(name),
      tools: (name) => {
        const entry = this.#entries.get(name);
        return entry === undefined ? undefined : this.#pinned.approved(entry.config, entry.upstream.tools);
      },
      profile: (name) => {
        const profile = this.#profiles[name];
        if (profile === undefined) throw notFound("profile", name);
        return profile;
      },
    });
  }

  /** Subscribes to hub events; returns the unsubscribe function. */
  on(listener: (event: HubEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Starts every enabled, non-lazy server concurrently and resolves when each is
   * ready or has failed. Never rejects because of one server: see {@link servers}.
   */
  async start(): Promise<void> {
    const starts = this.#pool
      .all()
      .filter(
        (upstream) =>
          upstream.config.enabled &&
          !upstream.config.lazy &&
          // A per-user server has no shared connection: each user's opens on their first call.
          !this.#pool.usersOf(upstream).every((name) => this.#isPerUser(name)),
      )
      .map((upstream) => upstream.start().catch(() => {}));
    await Promise.all(starts);
  }

  /** Stops every server; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([
      this.#own.close(),
      this.#perUser.connections.close(),
      ...this.#pool.all().map((upstream) => upstream.close()),
    ]);
    // First lists pinned just before are in the lock file once closed; a failed write was best effort.
    await this.#pinned.pins?.flush().catch(() => {});
  }

  /**
   * The configured servers with their state; with `profile`, only those it can use at all
   * (and their tools counted through it).
   */
  servers(profile?: string): ServerStatus[] {
    const tools = this.#catalog.tools(profile);
    const entries = [...this.#entries.values()];
    return (
      profile === undefined ? entries : entries.filter((e) => this.#catalog.reaches(e.config.name, profile))
    ).map(({ config, upstream }) => {
      const status = serverStatus(config, upstream, tools.filter((t) => t.server === config.name).length);
      if (config.share === false) status.clientConnections = this.#own.count(config.name);
      if (isPerUser(config)) {
        const users = this.#perUser.connections.count(config.name);
        status.userConnections = users;
        // No shared connection to describe: ready while a user's is open, idle otherwise.
        if (config.enabled) status.state = users > 0 ? "ready" : "idle";
      }
      const changes = this.#pinned.changes(config.name);
      if (changes.length > 0) {
        status.pinChanges = changes.length;
        status.held = changes.filter((c) => c.held).length;
      }
      return status;
    });
  }

  /**
   * Closes the connections a client session holds to `share: false` servers (see
   * {@link CallOptions.client}); a gateway calls it when the session ends.
   */
  async releaseClient(client: object): Promise<void> {
    await this.#own.release(client);
  }

  /**
   * Closes the connections (a per-user stdio server's processes) that the user `userKey`
   * ({@link UserRef.key}) holds to `server`, or to all per-user servers: for a disconnect or an
   * operator's revoke, after the vault's record is deleted. Resolves with the servers closed.
   */
  closeUser(userKey: string, server?: string): Promise<string[]> {
    return this.#perUser.connections.closeUser(userKey, server);
  }

  /** The per-(user, server) credentials of per-user servers (`HubOptions.vault`, default: memory). */
  get credentialVault(): CredentialVault {
    return this.#perUser.vault;
  }

  /**
   * Replaces the `users:` bounds (a reloaded config): caps apply to connections opened from now
   * on (none open is closed for them), the idle timeout to connections that go idle from now on.
   */
  setUsers(users: UsersConfig | undefined): void {
    this.#users = users;
  }

  /** The per-user servers the user `userKey` holds a connection to now. */
  userServers(userKey: string): string[] {
    return this.#perUser.connections.servers(userKey);
  }

  /** `text` with the config's secrets replaced by `***` (for anything shown or logged). */
  redact(text: string): string {
    return this.#secrets.redact(text);
  }

  /**
   * How many secrets a text is redacted of before it reaches a caller: the config's (those
   * {@link redact} hides), or, for the results of `server` called by the user `userKey` through
   * their own connection to a per-user server, the config's and that user's own (values and
   * tokens). For watching what a redactor holds: another user's values never count here.
   */
  redactedSecrets(options: { server?: string; user?: string } = {}): number {
    const { server, user } = options;
    const own =
      server === undefined || user === undefined ? undefined : this.#perUser.redactedSecrets(user, server);
    return own ?? new Set(this.#secrets.secrets).size;
  }

  /**
   * Adds the secrets of a reloaded config to those {@link redact} hides. The old ones stay:
   * a message about a server that used one may still be on its way.
   */
  addSecrets(secrets: readonly string[]): void {
    this.#secrets.add(secrets);
  }

  /**
   * How a server introduced itself on its connection (revision, serverInfo, capabilities,
   * instructions) and its lists as last fetched, with its original names; `undefined` while it
   * is not connected. What a recording keeps of a server besides its traffic.
   */
  serverDetails(name: string): ServerDetails | undefined {
    const upstream = this.#entries.get(name)?.upstream;
    if (upstream === undefined || upstream.state !== "ready") return undefined;
    const details: ServerDetails = {
      tools: upstream.tools,
      resources: upstream.resources,
      resourceTemplates: upstream.resourceTemplates,
      prompts: upstream.prompts,
    };
    if (upstream.protocolVersion !== undefined) details.protocolVersion = upstream.protocolVersion;
    if (upstream.serverInfo !== undefined) details.serverInfo = upstream.serverInfo;
    if (upstream.capabilities !== undefined) details.capabilities = upstream.capabilities;
    if (upstream.instructions !== undefined) details.instructions = upstream.instructions;
    return details;
  }

  /** The catalog (read-only use: listings, name resolution, collisions). */
  get catalog(): Catalog {
    return this.#catalog;
  }

  /**
   * Tools of every ready server (as the catalog names them); lists past their `ttlMs` are
   * refreshed behind. With `user`, also the tools that user's own connections to per-user
   * servers listed (no other user's: a per-user server's list is its user's alone).
   */
  tools(profile?: string, user?: UserRef): readonly CatalogTool[] {
    this.#refreshStale();
    return withOwn(this.#catalog.tools(profile), this.#perUser.userCatalog(user)?.tools(profile));
  }
  /**
   * The tools a model may see: {@link tools} less those only an MCP App calls (its
   * `_meta.ui.visibility` leaves out `"model"`). Such tools stay callable by name.
   */
  modelTools(profile?: string, user?: UserRef): readonly CatalogTool[] {
    this.#refreshStale();
    return withOwn(this.#catalog.modelTools(profile), this.#perUser.userCatalog(user)?.modelTools(profile));
  }
  resources(profile?: string): readonly CatalogResource[] {
    this.#refreshStale();
    return this.#catalog.resources(profile);
  }
  resourceTemplates(profile?: string): readonly CatalogResourceTemplate[] {
    return this.#catalog.resourceTemplates(profile);
  }
  prompts(profile?: string): readonly CatalogPrompt[] {
    this.#refreshStale();
    return this.#catalog.prompts(profile);
  }

  #refreshStale(): void {
    const now = Date.now();
    for (const upstream of this.#pool.all()) upstream.refreshIfStale(now);
  }

  /**
   * Calls a tool by its exposed name (or the catalog entry a caller already resolved it to,
   * through the same profile). Resolves with the tool's result (`isError`
   * for tool-level errors); rejects with {@link NotFoundError} for unknown names,
   * `UpstreamUnavailableError` while the server is down, `TimeoutError`,
   * `AbortedError` or `RpcError` from the server. Errors and `isError` results coming
   * from the server have the config's secrets redacted (raw and encoded). Runs through the
   * hub's interceptors (see {@link use}).
   */
  callTool(
    tool: string | CatalogTool,
    args: Record<string, unknown> = {},
    options: CallOptions = {},
  ): Promise<CallToolResult> {
    return this.#calls.callTool(tool, args, options);
  }

  /**
   * Reads a resource by URI (as listed by the catalog, or matching a server's template), or
   * at the target a caller already resolved it to.
   */
  readResource(uri: string | ResourceTarget, options: CallOptions = {}): Promise<ReadResourceResult> {
    return this.#calls.readResource(uri, options);
  }

  /** Gets a prompt by its exposed name (or the catalog entry a caller already resolved it to). */
  getPrompt(
    name: string | CatalogPrompt,
    args: Record<string, string> = {},
    options: CallOptions = {},
  ): Promise<GetPromptResult> {
    return this.#calls.getPrompt(name, args, options);
  }

  /** Argument completion for a prompt (exposed name) or a resource template. */
  complete(
    ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string },
    argument: { name: string; value: string },
    options: CallOptions & { context?: { arguments?: Record<string, string> } } = {},
  ): Promise<CompleteResult> {
    return this.#calls.complete(ref, argument, options);
  }

  /**
   * Sends any request to server `server` as it is, through the same path as a tool call
   * (the interceptors, its config's timeout, `input_required` handling, secrets redacted from
   * errors): for methods the hub has no call of its own for (an extension's, a vendor's). The
   * caller maps names in `params` to the server's own.
   *
   * @example
   * await hub.forward("tasks", "tasks/get", { taskId: "42" }, { signal });
   */
  forward(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<Record<string, unknown>> {
    return this.#calls.forward(server, method, params, options);
  }

  /**
   * One page of the skills of every server that declares the skills extension (SEP-2640), as a
   * gateway's `skills/list` answers it: see {@link listSkills}. With `profile`, only skills it
   * may read.
   */
  listSkills(options: CallOptions & { cursor?: string } = {}): Promise<SkillsPage> {
    return listSkills({ catalog: this.#catalog, forward: (...a) => this.forward(...a) }, options);
  }

  /**
   * Every skill of every server that declares the skills extension: the listing only, no file
   * is read. Names may repeat across servers; a skill is its server and its URI.
   */
  async skills(options: CallOptions = {}): Promise<HubSkill[]> {
    const skills: HubSkill[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    // A server that hands out cursors forever gets a thousand pages, as its other lists do.
    for (let pages = 0; pages < MAX_SKILL_PAGES; pages++) {
      const page = await this.listSkills(cursor === undefined ? options : { ...options, cursor });
      page.skills.forEach((entry, i) => {
        const skill = hubSkill(page.servers[i]!, entry);
        if (skill !== undefined) skills.push(skill);
      });
      cursor = page.nextCursor;
      if (cursor === undefined || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return skills;
  }

  /**
   * The entry of the skill whose `SKILL.md` is `uri` (`skills/get` to its server), for a skill
   * known only by its URI.
   */
  async getSkill(uri: string, options: CallOptions = {}): Promise<HubSkill> {
    const result = await this.#calls.aboutResource("skills/get", { uri }, options);
    const target = this.#catalog.resolveResource(uri, options.profile);
    const skill = target === undefined ? undefined : hubSkill(target.server, result.skill);
    if (skill === undefined) throw notFound("resource", uri, options.profile);
    return skill;
  }

  /**
   * Loads a skill for a model as a host must (SEP-2640): reads its `SKILL.md` only now, checks
   * its size, digest and frontmatter against the entry, and refuses it on any difference. A
   * skill known only by its URI is looked up first with {@link getSkill}.
   *
   * @throws McplexError `SKILL_VERIFICATION_FAILED`.
   */
  loadSkill(skill: HubSkill, options: LoadSkillOptions = {}): Promise<LoadedSkill> {
    return loadSkill(this, skill, options);
  }

  /**
   * Reads a file of a loaded skill (`references/GUIDE.md`, or its URI): only files its entry
   * lists, each checked against its size and digest there.
   *
   * @throws McplexError `SKILL_VERIFICATION_FAILED`.
   */
  readSkillFile(skill: LoadedSkill, path: string, options: CallOptions = {}): Promise<Uint8Array> {
    return readSkillFile(this, skill, path, options);
  }

  /**
   * Adds an interceptor on the path of every call, whoever makes it (inside those added
   * before it), or with `at: "upstream"` around each request sent to a server. Returns the
   * function that removes it.
   *
   * @example
   * const off = hub.use((next) => async (request) => {
   *   if (request.target?.kind === "tool" && request.target.tool?.annotations?.destructiveHint)
   *     throw new RpcError(ErrorCode.InvalidRequest, "destructive tools are off");
   *   return next(request);
   * });
   */
  use(interceptor: Interceptor, options: { at?: "call" | "upstream" } = {}): () => void {
    return this.#calls.use(interceptor, options.at ?? "call");
  }

  /**
   * Runs a request the caller built through the interceptors and sends it to its target's
   * server: for embedders that make requests of their own (a front of their own).
   */
  handle(request: CallRequest): Promise<JsonObject> {
    return this.#calls.handle(request);
  }

  /**
   * The hub's pipeline with layers of the caller's own (a gateway's), outside and inside the
   * hub's interceptors, ending in `options.end`, which is handed the hub's dispatch (the send to
   * the server a request's target names): see {@link PipelineExtension}. Nothing reaches a
   * server around the hub's interceptors.
   *
   * @example
   * const pipeline = hub.extend({ outer: [audit], end: (dispatch) => (request) => dispatch(request) });
   * await pipeline.handle(request);
   */
  extend(options: PipelineExtensionOptions): PipelineExtension {
    return this.#calls.extend(options);
  }

  /**
   * Asks the server behind `uri` for `resource-updated` events about it (2025
   * `resources/subscribe`). Counted: the server is asked once however many callers
   * subscribe, and released when the last one unsubscribes.
   */
  async subscribeResource(
    uri: string,
    options: { profile?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    const target = this.#catalog.resolveResource(uri, options.profile);
    if (target === undefined) throw notFound("resource", uri, options.profile);
    if (this.#subscriptions.acquire(`${target.server}\0${target.uri}`))
      await this.#entry(target.server).upstream.watchResource(target.uri, options.signal);
  }

  /** Releases one {@link subscribeResource}. */
  async unsubscribeResource(uri: string, options: { profile?: string } = {}): Promise<void> {
    const target = this.#catalog.resolveResource(uri, options.profile);
    if (target === undefined) return;
    if (this.#subscriptions.release(`${target.server}\0${target.uri}`))
      await this.#entry(target.server).upstream.unwatchResource(target.uri);
  }

  /**
   * Replaces the profiles at run time (a reloaded config): every server's lists are
   * announced as changed, since what each profile sees may have.
   */
  setProfiles(profiles: Record<string, ProfileConfig>): void {
    this.#profiles = profiles;
    this.#catalog.setProfiles(profiles);
    this.#emit({ type: "catalog-changed", servers: [...this.#entries.keys()], kinds: ALL_KINDS });
  }

  /** Adds a server at run time and starts it (unless lazy or disabled). */
  async addServer(config: ServerConfig): Promise<void> {
    if (this.#entries.has(config.name)) {
      throw new McplexError("INVALID_ARGUMENT", `server "${config.name}" already exists; remove it first`, {
        server: config.name,
      });
    }
    const entry = this.#add(config);
    this.#publish(config.name);
    if (config.enabled && !config.lazy && !isPerUser(config)) await entry.upstream.start().catch(() => {});
  }

  /** Removes a server; its connection stops unless another server shares it. */
  async removeServer(name: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw notFound("server", name);
    this.#entries.delete(name);
    this.#pinned.forget(name);
    this.#available.forget(name);
    this.#catalog.removeServer(name);
    await Promise.all([
      this.#own.closeServer(name),
      this.#perUser.connections.closeServer(name),
      this.#pool.release(entry.config),
    ]);
    this.#emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
  }

  /** Starts one server now (for lazy ones), or retries a failed one at once. */
  async startServer(name: string): Promise<void> {
    const { config, upstream } = this.#entry(name);
    if (!config.enabled) throw disabledServer(config.name);
    if (isPerUser(config))
      throw new McplexError(
        "INVALID_ARGUMENT",
        `server "${name}" runs per user (credentials: ${typeof config.credentials === "string" ? config.credentials : "exchange"}): each signed-in user's connection starts on their first call`,
        { server: name },
      );
    await upstream.start();
  }

  /** The names under `available:` that `profile` may connect (all of them without a profile). */
  availableServers(profile?: string): Promise<string[]> {
    return this.#available.reachable(profile);
  }

  /**
   * The `available:` servers (those `profile` may connect) with their tools: live while
   * connected, else as recorded the last time they ran, so a search can show tools of servers
   * not running.
   */
  availableTools(options: { profile?: string } = {}): Promise<AvailableServer[]> {
    return this.#available.list(options.profile);
  }

  /**
   * Starts one of the `available:` servers (only those: any other name is refused with an error
   * listing them) and resolves when it is ready; its tools join the catalog and listeners hear
   * `catalog-changed`. Connecting a connected one does nothing. A failed start rejects and
   * leaves nothing behind. With `profile`, only servers that profile could see.
   */
  async connectServer(name: string, options: { profile?: string } = {}): Promise<ServerStatus> {
    await this.#available.connect(name, options.profile);
    return this.servers().find((s) => s.name === name)!;
  }

  /**
   * Stops an `available:` server started by {@link connectServer}; its tools leave the catalog
   * (their list is kept for {@link availableTools}). `false` when it was not connected.
   */
  disconnectServer(name: string, options: { profile?: string } = {}): Promise<boolean> {
    return this.#available.disconnect(name, options.profile);
  }

  /** Replaces the `available:` definitions (a reloaded config); connected ones no longer listed are stopped. */
  setAvailable(configs: readonly ServerConfig[]): Promise<void> {
    return this.#available.set(configs);
  }

  /**
   * Stops a server and starts it again, and resolves when it is ready; rejects with the start
   * error. Servers that share its connection (identical definitions) restart with it, and
   * `share: false` servers drop their per-client connections, which reopen on next use.
   */
  async restartServer(name: string): Promise<void> {
    const { config, upstream } = this.#entry(name);
    if (!config.enabled) throw disabledServer(config.name);
    // A per-user server's users reconnect on their next call.
    if (isPerUser(config)) return this.#perUser.connections.closeServer(name);
    await Promise.all([this.#own.closeServer(name), upstream.close()]);
    await upstream.start();
  }

  /**
   * Turns a server on (started now unless lazy; a failed start shows in {@link servers}) or
   * off (stopped, its calls refused), at run time: the config file is not changed, so this
   * holds until mcplex restarts or a reload changes this server's definition.
   */
  async setServerEnabled(name: string, enabled: boolean): Promise<void> {
    const entry = this.#entry(name);
    if (entry.config.enabled === enabled) return;
    entry.config = { ...entry.config, enabled };
    const { upstream } = entry;
    if (enabled) {
      this.#publish(name);
      this.#emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
      if (!entry.config.lazy && !isPerUser(entry.config)) await upstream.start().catch(() => {});
      return;
    }
    // A connection shared with a server still enabled stays up for that one.
    const users = this.#pool.usersOf(upstream);
    const stillUsed = users.some((user) => this.#entries.get(user)?.config.enabled === true);
    await Promise.all([
      this.#own.closeServer(name),
      this.#perUser.connections.closeServer(name),
      stillUsed ? undefined : upstream.close(),
    ]);
    this.#publish(name);
    this.#emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
  }

  #add(config: ServerConfig): Entry {
    const entry: Entry = { config, upstream: this.#pool.acquire(config) };
    this.#entries.set(config.name, entry);
    this.#catalog.setServer(this.#snapshot(entry));
    return entry;
  }

  #isPerUser(name: string): boolean {
    const config = this.#entries.get(name)?.config;
    return config !== undefined && isPerUser(config);
  }

  /**
   * A connection to a server. `onEvent` is where it reports: the catalog for the shared one; a
   * client session's own one (`share: false`) reports nothing, as the shared connection lists
   * the server; a signed-in user's own one (`plan`) reports to the per-user servers' lists
   * only, and uses that user's grant or token, never the hub's shared OAuth. Its server
   * requests go to the calls made on it.
   */
  #createUpstream(
    config: ServerConfig,
    onEvent: ((upstream: Upstream, event: UpstreamEvent) => void) | undefined,
    plan?: UserConnectionPlan,
    redact: (text: string) => string = this.#redactor,
  ): Upstream {
    const options = this.#options;
    const credentials =
      plan === undefined
        ? { oauth: options.oauth }
        : {
            ...(plan.oauth === undefined ? {} : { oauth: plan.oauth }),
            ...(plan.bearer === undefined ? {} : { bearer: plan.bearer }),
          };
    const upstream: Upstream = new Upstream(config, {
      clientInfo: options.clientInfo ?? { name: "mcplex", version: "0.1.0" },
      onEvent: onEvent === undefined ? () => {} : (event) => onEvent(upstream, event),
      onServerRequest: () => this.#router.handlerFor(upstream),
      redact,
      slowMs: options.slowMs,
      backoff: options.backoff,
      clientCapabilities: options.clientCapabilities,
      protocolVersion: config.protocolVersion,
      ...credentials,
    });
    return upstream;
  }

  /** Re-publishes every server that uses this upstream to the catalog. */
  #publish(...names: string[]): void {
    for (const name of names) {
      const entry = this.#entries.get(name);
      if (entry !== undefined) this.#catalog.setServer(this.#snapshot(entry));
    }
  }

  /** What the catalog sees of a server: a pinned one's held tools left out (see {@link PinnedTools}). */
  #snapshot(entry: Entry): ServerSnapshot {
    if (isPerUser(entry.config)) {
      const snapshot = this.#perUser.snapshot(entry.config);
      return this.#pinned.filter(entry.config, snapshot, snapshot.listedAt ?? 0);
    }
    return this.#pinned.filter(
      entry.config,
      serverSnapshot(entry.config, entry.upstream),
      entry.upstream.listedAt,
    );
  }

  /**
   * The tool changes of pinned servers waiting for approval (all servers, or one), each with the
   * fields that differ and a diff of their text. See {@link trustTools}.
   */
  pinChanges(server?: string): ToolChange[] {
    return this.#pinned.changes(server);
  }

  /**
   * Approves the changes of pinned server `server` as it lists its tools now (all of them, or
   * the one `tool`): written to the lock file, and the tools held enter the catalog. Resolves
   * with the tool names approved.
   *
   * @throws McplexError `PIN_NOTHING_TO_TRUST` when there is nothing to approve; `INVALID_ARGUMENT`
   *   when the hub has no pins.
   */
  async trustTools(server: string, tool?: string): Promise<string[]> {
    const { pins } = this.#pinned;
    const entry = this.#entry(server);
    if (pins === undefined || entry.config.pin === undefined || entry.config.pin === "off")
      throw new McplexError("INVALID_ARGUMENT", `server "${server}" is not pinned`, {
        server,
        hint: 'set "pin: hold-tools" on it (or at the top of the config) to pin its tools',
      });
    const trusted = await pins.trust(server, tool);
    this.#publish(server);
    this.#emit({ type: "catalog-changed", servers: [server], kinds: ["tools"] });
    return trusted;
  }

  /**
   * Reads the lock file again (another process, such as `mcplex trust`, approved a change) and,
   * when it changed, checks every pinned server's tools against it.
   */
  async reloadPins(): Promise<void> {
    const { pins } = this.#pinned;
    if (pins === undefined || !(await pins.reload())) return;
    const names = [...this.#entries.keys()];
    this.#publish(...names);
    this.#emit({ type: "catalog-changed", servers: names, kinds: ["tools"] });
  }

  #onUpstreamEvent(upstream: Upstream, event: UpstreamEvent): void {
    if (this.#closed && event.type !== "state") return;
    const servers = this.#pool.usersOf(upstream);
    switch (event.type) {
      case "state": {
        // Ready, or resting after an idle stop: an idle stop and its restart change nothing listed.
        const wasAvailable = this.#availability.get(upstream) ?? false;
        const isAvailable = upstream.available;
        this.#availability.set(upstream, isAvailable);
        if (wasAvailable !== isAvailable) {
          this.#publish(...servers);
          this.#emit({ type: "catalog-changed", servers, kinds: ALL_KINDS });
        }
        for (const server of servers) {
          const { type: _, ...rest } = event;
          this.#emit({ type: "server-state", server, ...rest });
        }
        return;
      }
      case "list-changed":
        this.#publish(...servers);
        if (upstream.available) this.#emit({ type: "catalog-changed", servers, kinds: event.kinds });
        return;
      case "resource-updated":
        // A skill's or app's URI as clients know it, under the server's name.
        for (const server of servers)
          this.#emit({
            type: "resource-updated",
            server,
            uri: namespaceUri(this.#catalog.uriNamespace(server), event.uri),
          });
        return;
      case "notification": {
        const { type: _, params, ...rest } = event;
        const clean = params === undefined ? {} : { params: this.#calls.redactNotice(params) };
        for (const server of servers) this.#emit({ type: "notification", server, ...rest, ...clean });
        return;
      }
      case "slow-call": {
        const { type: _, ...rest } = event;
        this.#emit({ type: "slow-call", server: servers[0] ?? upstream.name, ...rest });
        return;
      }
      case "list-not-implemented":
        for (const server of servers) this.#emit({ type: event.type, server, method: event.method });
        return;
    }
  }

  /**
   * The tool behind an exposed name. When the catalog does not know it yet, first waits for the
   * servers still starting that may own it (by its prefix; all of them when the name cannot
   * tell), each up to its own start timeout: a call made before its server has listed its
   * tools is not refused as unknown. `undefined` when the name is unknown all the same.
   */
  async findTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef } = {},
  ): Promise<CatalogTool | undefined> {
    const tool = this.#resolveTool(name, options);
    if (tool !== undefined) return tool;
    const waited = await this.#startOfOwners(name, options.signal);
    const opened = await this.#openUserOwners(name, options);
    if (!waited && !opened) return undefined;
    return this.#resolveTool(name, options);
  }

  /**
   * Opens `user`'s own connections to the per-user servers reachable through `profile` that
   * they hold none to yet, so that {@link tools} with `user` lists them: a server the user has
   * connected starts; one they have not (connect first) stays out of their list, without error
   * (a call of one of its tools by name answers with the connect prompt). Nothing without a user.
   */
  async openUserServers(
    user: UserRef | undefined,
    options: { profile?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    if (user === undefined) return;
    const opening = [...this.#entries.values()]
      .map((e) => e.config)
      .filter(
        (c) =>
          c.enabled &&
          isPerUser(c) &&
          !this.#perUser.listed(user, c.name) &&
          (options.profile === undefined || this.#catalog.reaches(c.name, options.profile)),
      );
    await Promise.allSettled(
      opening.map(async (config) => (await this.#perUser.acquire(user, config, options.signal)).release()),
    );
  }

  /** A tool of the catalog, else of the user's own connections to per-user servers. */
  #resolveTool(name: string, options: { profile?: string; user?: UserRef }): CatalogTool | undefined {
    return (
      this.#catalog.resolveTool(name, options.profile) ??
      this.#perUser.userCatalog(options.user)?.resolveTool(name, options.profile)
    );
  }

  /**
   * Opens the caller's own connection to each per-user server that may own `name` and whose
   * tools no user's connection has listed yet, so that the first user's first call finds its
   * tool. Without a user, such a server refuses (sign-in needed); a user who must connect first
   * gets that error. `false` when there is no such server.
   */
  async #openUserOwners(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef },
  ): Promise<boolean> {
    const unlisted = [...this.#entries.values()]
      .map((e) => e.config)
      .filter((c) => c.enabled && isPerUser(c) && !this.#perUser.listed(options.user, c.name));
    if (unlisted.length === 0) return false;
    const owners = ownersOfName(
      name,
      [...this.#entries.values()].map((e) => e.config),
    );
    const opening = unlisted.filter(
      (c) =>
        (owners === undefined || owners.includes(c.name)) &&
        (options.profile === undefined || this.#catalog.reaches(c.name, options.profile)),
    );
    if (opening.length === 0) return false;
    // A name that can only be this server's answers with its refusal; a guess at any server, not.
    const only = owners?.length === 1;
    const results = await Promise.allSettled(
      opening.map(async (config) => {
        const lease = await this.#perUser.acquire(options.user, config, options.signal);
        lease.release();
      }),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (only && failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return true;
  }

  /** Waits for the starting servers that may own `name`; `false` when there are none. */
  async #startOfOwners(name: string, signal?: AbortSignal): Promise<boolean> {
    const entries = [...this.#entries.values()];
    return waitForOwners(
      name,
      entries.map((e) => ({ config: e.config, upstream: e.upstream })),
      signal,
    );
  }

  /** The config server `name` runs with (as loaded, or as last reloaded); `undefined` if none. */
  serverConfig(name: string): ServerConfig | undefined {
    return this.#entries.get(name)?.config;
  }

  #entry(name: string): Entry {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw notFound("server", name);
    return entry;
  }

  #emit(event: HubEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

export type { CallOptions, HubEvent, HubOptions, ServerDetails, ServerStatus } from "./hub-types.js";

/** A listed entry as a {@link HubSkill}, or `undefined` when it lacks its uri or frontmatter. */
function hubSkill(server: string, entry: unknown): HubSkill | undefined {
  const e = entry as Partial<SkillEntry> | undefined;
  const fm = e?.frontmatter as { name?: unknown; description?: unknown } | undefined;
  if (typeof e?.uri !== "string" || typeof fm?.name !== "string") return undefined;
  return {
    server,
    name: fm.name,
    description: typeof fm.description === "string" ? fm.description : "",
    uri: e.uri,
    entry: e as SkillEntry,
  };
}

/** `shared` followed by a user's own tools whose names it does not hold (the same array without any). */
function withOwn(
  shared: readonly CatalogTool[],
  own: readonly CatalogTool[] | undefined,
): readonly CatalogTool[] {
  if (own === undefined || own.length === 0) return shared;
  const names = new Set(shared.map((t) => t.name));
  return [...shared, ...own.filter((t) => !names.has(t.name))];
}
