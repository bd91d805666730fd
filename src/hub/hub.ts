import type {
  CallToolResult,
  CompleteResult,
  GetPromptResult,
  ReadResourceResult,
} from "@modelcontextprotocol/client";
import type { Catalog } from "../catalog/catalog.js";
import type {
  CatalogPrompt,
  CatalogResource,
  CatalogResourceTemplate,
  CatalogTool,
  ResourceTarget,
} from "../catalog/types.js";
import type { SecretSet } from "../config/redact.js";
import type { ProfileConfig, ServerConfig, UsersConfig } from "../config/types.js";
import type { PerUserServers } from "../credentials/per-user-servers.js";
import type { CredentialVault, UserRef } from "../credentials/user-credentials.js";
import type { SkillsPage } from "../ext/skills/skill-listing.js";
import type { HubSkill, LoadedSkill, LoadSkillOptions } from "../ext/skills/skill-reader.js";
import type { Skills } from "../ext/skills/skills.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import type { AvailableServer } from "../servers/available-servers.js";
import { notFound } from "../servers/lookup-errors.js";
import type { Servers } from "../servers/servers.js";
import type { CallPath } from "./call-path.js";
import type { CallRequest, Interceptor, JsonObject } from "./call-pipeline.js";
import { assembleHub } from "./hub-assembly.js";
import type { CallOptions, HubEvent, HubOptions, ServerDetails, ServerStatus } from "./hub-types.js";
import { RefCounts } from "./ref-counts.js";

/**
 * Many MCP servers behind one catalog. Servers start concurrently, each on its own
 * timeout; one that fails never delays or breaks the others. The hub holds the catalog and the
 * calls; it delegates the rest to its parts (see `hub-assembly.ts`): the servers' administration
 * to {@link Servers}, the per-user servers to {@link PerUserServers}, skills to {@link Skills}.
 *
 * @example
 * const hub = new Hub({ config: await loadConfig() });
 * await hub.start();
 * const result = await hub.callTool("github__search_issues", { q: "bug" }, { timeout: 10_000 });
 * await hub.close();
 */
export class Hub {
  readonly #catalog: Catalog;
  readonly #listeners = new Set<(event: HubEvent) => void>();
  /** Resource subscriptions by `server\0uri`, counted. */
  readonly #subscriptions = new RefCounts<string>();
  /** What {@link redact} hides: the config's secrets, and those of every reload since. */
  readonly #secrets: SecretSet;
  /** The last-seen tool list of each server (see `HubOptions.toolCache`), redacted by {@link redact}. */
  readonly toolLists: ToolListStore;
  readonly #servers: Servers;
  readonly #calls: CallPath;
  readonly #perUser: PerUserServers;
  readonly #skills: Skills;

  constructor(options: HubOptions) {
    const parts = assembleHub(options, {
      emit: (event) => this.#emit(event),
      redact: (text) => this.redact(text),
      findTool: (name, o) => this.findTool(name, o),
      forward: (...a) => this.forward(...a),
      readResource: (uri, o) => this.readResource(uri, o),
    });
    this.#catalog = parts.catalog;
    this.#secrets = parts.secrets;
    this.toolLists = parts.toolLists;
    this.#servers = parts.servers;
    this.#calls = parts.calls;
    this.#perUser = parts.perUser;
    this.#skills = parts.skills;
  }

  /** Subscribes to hub events; returns the unsubscribe function. */
  on(listener: (event: HubEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts every enabled, non-lazy server; resolves when each is ready or has failed, never rejects for one. */
  start(): Promise<void> {
    return this.#servers.startAll();
  }

  /** Stops every server; safe to call twice. */
  close(): Promise<void> {
    return this.#servers.close();
  }

  /** The configured servers with their state; with `profile`, those it can use (their tools counted through it). */
  servers(profile?: string): ServerStatus[] {
    return this.#servers.status(profile);
  }

  /** Closes a client session's connections to `share: false` servers (see {@link CallOptions.client}). */
  async releaseClient(client: object): Promise<void> {
    await this.#servers.clientConnections.release(client);
  }

  /** Closes the user's connections to per-user servers (see `UserConnectionPool.closeUser`); the servers closed. */
  closeUser(userKey: string, server?: string): Promise<string[]> {
    return this.#perUser.connections.closeUser(userKey, server);
  }

  /** The per-(user, server) credentials of per-user servers (`HubOptions.vault`, default: memory). */
  get credentialVault(): CredentialVault {
    return this.#perUser.vault;
  }

  /** Replaces the `users:` bounds (a reloaded config): see {@link PerUserServers.setUsers}. */
  setUsers(users: UsersConfig | undefined): void {
    this.#perUser.setUsers(users);
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
   * {@link redact} hides), or, for `server`'s results called by the user `userKey` through their
   * own connection to a per-user server, the config's and that user's own. Never another user's.
   */
  redactedSecrets(options: { server?: string; user?: string } = {}): number {
    const { server, user } = options;
    const own =
      server === undefined || user === undefined ? undefined : this.#perUser.redactedSecrets(user, server);
    return own ?? new Set(this.#secrets.secrets).size;
  }

  /** Adds a reloaded config's secrets to those {@link redact} hides; the old ones stay (messages in flight). */
  addSecrets(secrets: readonly string[]): void {
    this.#secrets.add(secrets);
  }

  /** How a connected server introduced itself and its lists as last fetched, with original names. */
  serverDetails(name: string): ServerDetails | undefined {
    return this.#servers.details(name);
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
    this.#servers.refreshStale();
    return withOwn(this.#catalog.tools(profile), this.#perUser.userCatalog(user)?.tools(profile));
  }
  /**
   * The tools a model may see: {@link tools} less those only an MCP App calls (its
   * `_meta.ui.visibility` leaves out `"model"`). Such tools stay callable by name.
   */
  modelTools(profile?: string, user?: UserRef): readonly CatalogTool[] {
    this.#servers.refreshStale();
    return withOwn(this.#catalog.modelTools(profile), this.#perUser.userCatalog(user)?.modelTools(profile));
  }
  resources(profile?: string): readonly CatalogResource[] {
    this.#servers.refreshStale();
    return this.#catalog.resources(profile);
  }
  resourceTemplates(profile?: string): readonly CatalogResourceTemplate[] {
    return this.#catalog.resourceTemplates(profile);
  }
  prompts(profile?: string): readonly CatalogPrompt[] {
    this.#servers.refreshStale();
    return this.#catalog.prompts(profile);
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

  /** One page of the skills of every server with the skills extension, as `skills/list` answers: {@link Skills.list}. */
  listSkills(options: CallOptions & { cursor?: string } = {}): Promise<SkillsPage> {
    return this.#skills.list(options);
  }

  /** Every skill of every server with the skills extension, listed only: see {@link Skills.all}. */
  skills(options: CallOptions = {}): Promise<HubSkill[]> {
    return this.#skills.all(options);
  }

  /** The entry of the skill whose `SKILL.md` is `uri`: see {@link Skills.get}. */
  getSkill(uri: string, options: CallOptions = {}): Promise<HubSkill> {
    return this.#skills.get(uri, options);
  }

  /** Loads a skill for a model, verified against its entry (SEP-2640): see {@link Skills.load}. */
  loadSkill(skill: HubSkill, options: LoadSkillOptions = {}): Promise<LoadedSkill> {
    return this.#skills.load(skill, options);
  }

  /** Reads a file its entry lists of a loaded skill, verified: see {@link Skills.readFile}. */
  readSkillFile(skill: LoadedSkill, path: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.#skills.readFile(skill, path, options);
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

  /** The interceptors on the path of every call, the first outermost (a gateway composes them). */
  get interceptors(): readonly Interceptor[] {
    return this.#calls.interceptors;
  }

  /** Changes each time {@link use} adds or removes an interceptor (a gateway composes again then). */
  get interceptorRevision(): number {
    return this.#calls.revision;
  }

  /**
   * Runs a request the caller built through the interceptors and sends it to its target's
   * server: for embedders that make requests of their own (a front of their own).
   */
  handle(request: CallRequest): Promise<JsonObject> {
    return this.#calls.handle(request);
  }

  /**
   * The end of every pipeline: sends a request whose target is resolved to the server that owns
   * it, with names mapped to the server's own (no interceptor of {@link use} runs here; a
   * gateway calls it after its own layers). Rejects with `NotFoundError` when the target
   * names nothing.
   */
  dispatch(request: CallRequest): Promise<JsonObject> {
    return this.#calls.dispatch(request);
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
      await this.#servers.entry(target.server).upstream.watchResource(target.uri, options.signal);
  }

  /** Releases one {@link subscribeResource}. */
  async unsubscribeResource(uri: string, options: { profile?: string } = {}): Promise<void> {
    const target = this.#catalog.resolveResource(uri, options.profile);
    if (target === undefined) return;
    if (this.#subscriptions.release(`${target.server}\0${target.uri}`))
      await this.#servers.entry(target.server).upstream.unwatchResource(target.uri);
  }

  /** Replaces the profiles (a reloaded config); every server's lists are announced as changed. */
  setProfiles(profiles: Record<string, ProfileConfig>): void {
    this.#servers.setProfiles(profiles);
  }

  /** Adds a server at run time and starts it (unless lazy or disabled). */
  addServer(config: ServerConfig): Promise<void> {
    return this.#servers.add(config);
  }

  /** Removes a server; its connection stops unless another server shares it. */
  removeServer(name: string): Promise<void> {
    return this.#servers.remove(name);
  }

  /** Starts one server now (for lazy ones), or retries a failed one at once. */
  startServer(name: string): Promise<void> {
    return this.#servers.start(name);
  }

  /** Stops a server and starts it again: see {@link Servers.restart}. */
  restartServer(name: string): Promise<void> {
    return this.#servers.restart(name);
  }

  /** Turns a server on or off at run time (the config file is not changed): see {@link Servers.setEnabled}. */
  setServerEnabled(name: string, enabled: boolean): Promise<void> {
    return this.#servers.setEnabled(name, enabled);
  }

  /** The names under `available:` that `profile` may connect (all of them without a profile). */
  availableServers(profile?: string): Promise<string[]> {
    return this.#servers.available.reachable(profile);
  }

  /** The `available:` servers `profile` may connect, with their live or recorded tools. */
  availableTools(options: { profile?: string } = {}): Promise<AvailableServer[]> {
    return this.#servers.available.list(options.profile);
  }

  /** Starts one of the `available:` servers, ready: see {@link AvailableServers.connect}. */
  async connectServer(name: string, options: { profile?: string } = {}): Promise<ServerStatus> {
    await this.#servers.available.connect(name, options.profile);
    return this.servers().find((s) => s.name === name)!;
  }

  /** Stops an `available:` server started by {@link connectServer}; `false` when it was not connected. */
  disconnectServer(name: string, options: { profile?: string } = {}): Promise<boolean> {
    return this.#servers.available.disconnect(name, options.profile);
  }

  /** Replaces the `available:` definitions (a reloaded config); connected ones no longer listed are stopped. */
  setAvailable(configs: readonly ServerConfig[]): Promise<void> {
    return this.#servers.available.set(configs);
  }

  /** The tool changes of pinned servers waiting for approval (all servers, or one). See {@link trustTools}. */
  pinChanges(server?: string): ToolChange[] {
    return this.#servers.pinChanges(server);
  }

  /** Approves the changes of pinned server `server`: see {@link Servers.trustTools}. */
  trustTools(server: string, tool?: string): Promise<string[]> {
    return this.#servers.trustTools(server, tool);
  }

  /** Reads the lock file again and checks pinned servers' tools against it: see {@link Servers.reloadPins}. */
  reloadPins(): Promise<void> {
    return this.#servers.reloadPins();
  }

  /** The config server `name` runs with (as loaded, or as last reloaded); `undefined` if none. */
  serverConfig(name: string): ServerConfig | undefined {
    return this.#servers.config(name);
  }

  /**
   * The tool behind an exposed name. When the catalog does not know it yet, first waits for the
   * servers still starting that may own it (by its prefix; all of them when the name cannot
   * tell), each up to its own start timeout, and opens the caller's own connections to per-user
   * servers that may own it. `undefined` when the name is unknown all the same.
   */
  async findTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef } = {},
  ): Promise<CatalogTool | undefined> {
    const tool = this.#resolveTool(name, options);
    if (tool !== undefined) return tool;
    const waited = await this.#servers.waitForOwners(name, options.signal);
    const opened = await this.#perUser.openOwners(name, options);
    if (!waited && !opened) return undefined;
    return this.#resolveTool(name, options);
  }

  /** Opens `user`'s own connections to per-user servers so {@link tools} lists them: {@link PerUserServers.openAll}. */
  openUserServers(
    user: UserRef | undefined,
    options: { profile?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    return this.#perUser.openAll(user, options);
  }

  /** A tool of the catalog, else of the user's own connections to per-user servers. */
  #resolveTool(name: string, options: { profile?: string; user?: UserRef }): CatalogTool | undefined {
    return (
      this.#catalog.resolveTool(name, options.profile) ??
      this.#perUser.userCatalog(options.user)?.resolveTool(name, options.profile)
    );
  }

  #emit(event: HubEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

export type { CallOptions, HubEvent, HubOptions, ServerDetails, ServerStatus } from "./hub-types.js";

/** `shared` followed by a user's own tools whose names it does not hold (the same array without any). */
function withOwn(
  shared: readonly CatalogTool[],
  own: readonly CatalogTool[] | undefined,
): readonly CatalogTool[] {
  if (own === undefined || own.length === 0) return shared;
  const names = new Set(shared.map((t) => t.name));
  return [...shared, ...own.filter((t) => !names.has(t.name))];
}
