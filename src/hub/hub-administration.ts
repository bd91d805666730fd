import type { ReadResourceResult } from "@modelcontextprotocol/client";
import type { CatalogTool, ResourceTarget } from "../catalog/types.js";
import { COMPOSITE_SERVER } from "../config/read-composites.js";
import type { CompositeToolConfig, ProfileConfig, ServerConfig, UsersConfig } from "../config/types.js";
import type { CredentialVault, UserRef } from "../credentials/user-credentials.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import type { AvailableServer } from "../servers/available-servers.js";
import { assembleHub, type HubParts } from "./hub-assembly.js";
import type {
  CallOptions,
  DecisionEvent,
  HubEvent,
  HubOptions,
  ServerDetails,
  ServerStatus,
} from "./hub-types.js";

/**
 * The administration half of the `Hub`'s API: its events, its servers (start, stop, add,
 * remove, turn on and off, the `available:` ones, pinned tools' approval), the per-user servers'
 * users, and the secrets it redacts. Each member is a delegation to a part the hub is assembled
 * from (see {@link assembleHub}): `Servers`, `PerUserServers`, the config's
 * `SecretSet`. `Hub` adds the catalog, the calls and the skills.
 */
export abstract class HubAdministration {
  /** The parts the hub is made of, wired to each other. */
  protected readonly parts: HubParts;
  readonly #listeners = new Set<(event: HubEvent) => void>();
  /** The last-seen tool list of each server (see `HubOptions.toolCache`), redacted by {@link redact}. */
  readonly toolLists: ToolListStore;

  constructor(options: HubOptions) {
    this.parts = assembleHub(options, {
      emit: (event) => this.emit(event),
      redact: (text) => this.redact(text),
      waitForTool: (name, o) => this.waitForTool(name, o),
      forward: (...a) => this.forward(...a),
      readResource: (uri, o) => this.readResource(uri, o),
    });
    this.toolLists = this.parts.toolLists;
  }

  /**
   * The tool behind a name the catalog did not have for this caller (`Hub.findTool` looks there
   * first; so does a gateway's request): a tool of the user's own connections to per-user
   * servers; else, once the servers still starting that may own it have listed (by its prefix;
   * all of them when the name cannot tell; each up to its own start timeout) and the caller's own
   * connections to per-user servers that may own it are open, looked up again. `undefined` when
   * the name is unknown all the same.
   */
  async waitForTool(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef } = {},
  ): Promise<CatalogTool | undefined> {
    const { perUser, servers, catalog } = this.parts;
    const own = perUser.userCatalog(options.user)?.resolveTool(name, options.profile);
    if (own !== undefined) return own;
    const waited = await servers.waitForOwners(name, options.signal);
    const opened = await perUser.openOwners(name, options);
    if (!waited && !opened) return undefined;
    return (
      catalog.resolveTool(name, options.profile) ??
      perUser.userCatalog(options.user)?.resolveTool(name, options.profile)
    );
  }
  /** See `Hub.forward`. */
  abstract forward(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<Record<string, unknown>>;
  /** See `Hub.readResource`. */
  abstract readResource(uri: string | ResourceTarget, options?: CallOptions): Promise<ReadResourceResult>;

  /** Subscribes to hub events; returns the unsubscribe function. */
  on(listener: (event: HubEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Starts every enabled, non-lazy server concurrently and resolves when each is
   * ready or has failed. Never rejects because of one server: see {@link servers}.
   */
  start(): Promise<void> {
    return this.parts.servers.startAll();
  }

  /** Stops every server; safe to call twice. */
  close(): Promise<void> {
    return this.parts.servers.close();
  }

  /**
   * The configured servers with their state; with `profile`, only those it can use at all
   * (and their tools counted through it).
   */
  servers(profile?: string): ServerStatus[] {
    return this.parts.servers.status(profile);
  }

  /**
   * Closes the connections a client session holds to `share: false` servers (see
   * {@link CallOptions.client}); a gateway calls it when the session ends.
   */
  async releaseClient(client: object): Promise<void> {
    await this.parts.servers.clientConnections.release(client);
  }

  /**
   * Closes the connections (a per-user stdio server's processes) that the user `userKey`
   * ({@link UserRef.key}) holds to `server`, or to all per-user servers: for a disconnect or an
   * operator's revoke, after the vault's record is deleted. Resolves with the servers closed.
   */
  closeUser(userKey: string, server?: string): Promise<string[]> {
    return this.parts.perUser.connections.closeUser(userKey, server);
  }

  /** The per-(user, server) credentials of per-user servers (`HubOptions.vault`, default: memory). */
  get credentialVault(): CredentialVault {
    return this.parts.perUser.vault;
  }

  /**
   * Replaces the `users:` bounds (a reloaded config): caps apply to connections opened from now
   * on (none open is closed for them), the idle timeout to connections that go idle from now on.
   */
  setUsers(users: UsersConfig | undefined): void {
    this.parts.perUser.setUsers(users);
  }

  /** The per-user servers the user `userKey` holds a connection to now. */
  userServers(userKey: string): string[] {
    return this.parts.perUser.connections.servers(userKey);
  }

  /** `text` with the config's secrets replaced by `***` (for anything shown or logged). */
  redact(text: string): string {
    return this.parts.secrets.redact(text);
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
      server === undefined || user === undefined
        ? undefined
        : this.parts.perUser.redactedSecrets(user, server);
    return own ?? new Set(this.parts.secrets.secrets).size;
  }

  /**
   * Adds the secrets of a reloaded config to those {@link redact} hides. The old ones stay:
   * a message about a server that used one may still be on its way.
   */
  addSecrets(secrets: readonly string[]): void {
    this.parts.secrets.add(secrets);
  }

  /**
   * How a server introduced itself on its connection (revision, serverInfo, capabilities,
   * instructions) and its lists as last fetched, with its original names; `undefined` while it
   * is not connected. What a recording keeps of a server besides its traffic.
   */
  serverDetails(name: string): ServerDetails | undefined {
    return this.parts.servers.details(name);
  }

  /**
   * Replaces the profiles at run time (a reloaded config): every server's lists are
   * announced as changed, since what each profile sees may have.
   */
  setProfiles(profiles: Record<string, ProfileConfig>): void {
    this.parts.servers.setProfiles(profiles);
  }

  /** The composite tool of this name (`composites:`), as the config defines it. */
  composite(name: string): CompositeToolConfig | undefined {
    return this.parts.composites.get(name);
  }

  /**
   * Replaces the composite tools at run time (a reloaded config's `composites:`); clients hear of
   * it as a changed tool list.
   */
  setComposites(composites: Record<string, CompositeToolConfig> | undefined): void {
    if (this.parts.composites.set(composites))
      this.emit({ type: "catalog-changed", servers: [COMPOSITE_SERVER], kinds: ["tools"] });
  }

  /** Adds a server at run time and starts it (unless lazy or disabled). */
  addServer(config: ServerConfig): Promise<void> {
    return this.parts.servers.add(config);
  }

  /** Removes a server; its connection stops unless another server shares it. */
  removeServer(name: string): Promise<void> {
    return this.parts.servers.remove(name);
  }

  /** Starts one server now (for lazy ones), or retries a failed one at once. */
  startServer(name: string): Promise<void> {
    return this.parts.servers.start(name);
  }

  /**
   * Stops a server and starts it again, and resolves when it is ready; rejects with the start
   * error. Servers that share its connection (identical definitions) restart with it, and
   * `share: false` servers drop their per-client connections, which reopen on next use.
   */
  restartServer(name: string): Promise<void> {
    return this.parts.servers.restart(name);
  }

  /**
   * Turns a server on (started now unless lazy; a failed start shows in {@link servers}) or
   * off (stopped, its calls refused), at run time: the config file is not changed, so this
   * holds until mcplex restarts or a reload changes this server's definition.
   */
  setServerEnabled(name: string, enabled: boolean): Promise<void> {
    return this.parts.servers.setEnabled(name, enabled);
  }

  /** The names under `available:` that `profile` may connect (all of them without a profile). */
  availableServers(profile?: string): Promise<string[]> {
    return this.parts.servers.available.reachable(profile);
  }

  /**
   * The `available:` servers (those `profile` may connect) with their tools: live while
   * connected, else as recorded the last time they ran, so a search can show tools of servers
   * not running.
   */
  availableTools(options: { profile?: string } = {}): Promise<AvailableServer[]> {
    return this.parts.servers.available.list(options.profile);
  }

  /**
   * Starts one of the `available:` servers (only those: any other name is refused with an error
   * listing them) and resolves when it is ready; its tools join the catalog and listeners hear
   * `catalog-changed`. Connecting a connected one does nothing. A failed start rejects and
   * leaves nothing behind. With `profile`, only servers that profile could see.
   */
  async connectServer(name: string, options: { profile?: string } = {}): Promise<ServerStatus> {
    await this.parts.servers.available.connect(name, options.profile);
    return this.servers().find((s) => s.name === name)!;
  }

  /**
   * Stops an `available:` server started by {@link connectServer}; its tools leave the catalog
   * (their list is kept for {@link availableTools}). `false` when it was not connected.
   */
  disconnectServer(name: string, options: { profile?: string } = {}): Promise<boolean> {
    return this.parts.servers.available.disconnect(name, options.profile);
  }

  /** Replaces the `available:` definitions (a reloaded config); connected ones no longer listed are stopped. */
  setAvailable(configs: readonly ServerConfig[]): Promise<void> {
    return this.parts.servers.available.set(configs);
  }

  /**
   * The tool changes of pinned servers waiting for approval (all servers, or one), each with the
   * fields that differ and a diff of their text. See {@link trustTools}.
   */
  pinChanges(server?: string): ToolChange[] {
    return this.parts.servers.pinChanges(server);
  }

  /**
   * Approves the changes of pinned server `server` as it lists its tools now (all of them, or
   * the one `tool`): written to the lock file, and the tools held enter the catalog. Resolves
   * with the tool names approved.
   *
   * @throws McplexError `PIN_NOTHING_TO_TRUST` when there is nothing to approve; `INVALID_ARGUMENT`
   *   when the hub has no pins.
   */
  trustTools(server: string, tool?: string): Promise<string[]> {
    return this.parts.servers.trustTools(server, tool);
  }

  /**
   * Reads the lock file again (another process, such as `mcplex trust`, approved a change) and,
   * when it changed, checks every pinned server's tools against it.
   */
  reloadPins(): Promise<void> {
    return this.parts.servers.reloadPins();
  }

  /** The config server `name` runs with (as loaded, or as last reloaded); `undefined` if none. */
  serverConfig(name: string): ServerConfig | undefined {
    return this.parts.servers.config(name);
  }

  /**
   * Opens `user`'s own connections to the per-user servers reachable through `profile` that
   * they hold none to yet, so that {@link tools} with `user` lists them: a server the user has
   * connected starts; one they have not (connect first) stays out of their list, without error
   * (a call of one of its tools by name answers with the connect prompt). Nothing without a user.
   */
  openUserServers(
    user: UserRef | undefined,
    options: { profile?: string; signal?: AbortSignal } = {},
  ): Promise<void> {
    return this.parts.perUser.openAll(user, options);
  }

  /** Tells the hub's listeners that a layer decided something (see {@link DecisionEvent}). */
  decided(by: DecisionEvent["by"], name: string, effect: string): void {
    this.emit({ type: "decision", by, name, effect });
  }

  /** Tells every listener of {@link on}. */
  protected emit(event: HubEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
