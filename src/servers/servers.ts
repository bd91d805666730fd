import type { Catalog } from "../catalog/catalog.js";
import { namespaceUri } from "../catalog/namespaced-uris.js";
import type { ServerSnapshot } from "../catalog/types.js";
import { isPerUser } from "../config/read-credentials.js";
import { redactValue } from "../config/redact.js";
import type { ProfileConfig, ServerConfig } from "../config/types.js";
import type { PerUserServers } from "../credentials/per-user-servers.js";
import { McplexError } from "../errors.js";
import type { PinnedTools } from "../pins/pinned-tools.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ListKind } from "../protocol/list-changes.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import type { Upstream, UpstreamEvent } from "../upstream/upstream.js";
import { AvailableServers } from "./available-servers.js";
import { ClientConnections } from "./client-connections.js";
import { disabledServer, notFound } from "./lookup-errors.js";
import { serverDetails, serverSnapshot, serverStatus } from "./server-status.js";
import type { ServerDetails, ServerEvent, ServerStatus } from "./server-types.js";
import { waitForOwners } from "./starting-owners.js";
import { UpstreamPool } from "./upstream-pool.js";

const ALL_KINDS: ListKind[] = ["tools", "resources", "resourceTemplates", "prompts"];

/** A configured server and the connection it runs on (shared by identical definitions). */
export interface ServerEntry {
  config: ServerConfig;
  upstream: Upstream;
}

/** What {@link Servers} needs of the hub that holds them. */
export interface ServersHost {
  /**
   * A connection to a server, not started: reporting to `onEvent` (the shared one), or to no one
   * (a client session's own one, `share: false`: the shared connection lists the server).
   */
  createUpstream(
    config: ServerConfig,
    onEvent: ((upstream: Upstream, event: UpstreamEvent) => void) | undefined,
  ): Upstream;
  /** The catalog the servers are published to. */
  readonly catalog: Catalog;
  /** Servers called with each signed-in user's own credentials: their connections and tools. */
  readonly perUser: PerUserServers;
  /** Pinned servers' tools held out of the catalog, and their changes. */
  readonly pinned: PinnedTools;
  /** Where the `available:` servers' last-seen tool lists are kept. */
  readonly toolLists: ToolListStore;
  /** `text` with the config's secrets replaced by `***` (a server's notifications go through it). */
  redact(text: string): string;
  emit(event: ServerEvent): void;
}

/**
 * The hub's configured servers and their administration: each server's entry and connection
 * (shared by identical definitions, see {@link UpstreamPool}; one per client session with
 * `share: false`, see {@link ClientConnections}), starting, stopping, adding and removing them at
 * run time, the `available:` servers started on request, pinned tools' approval, and what each
 * connection's events mean for the catalog and the hub's listeners.
 */
export class Servers {
  readonly #host: ServersHost;
  readonly #entries = new Map<string, ServerEntry>();
  /** Upstreams shared by identical server definitions, by connection key. */
  readonly #pool: UpstreamPool;
  /** Connections of `share: false` servers, one per client session. */
  readonly clientConnections: ClientConnections;
  /** The `available:` servers, started on request. */
  readonly available: AvailableServers;
  #profiles: Record<string, ProfileConfig>;
  /** Whether each upstream was last published as available (see `Upstream.available`). */
  readonly #availability = new WeakMap<Upstream, boolean>();
  #closed = false;

  constructor(
    config: {
      servers: readonly ServerConfig[];
      available?: readonly ServerConfig[] | undefined;
      profiles: Record<string, ProfileConfig>;
    },
    host: ServersHost,
  ) {
    this.#host = host;
    this.#pool = new UpstreamPool((server) =>
      host.createUpstream(server, (upstream, event) => this.#onUpstreamEvent(upstream, event)),
    );
    this.clientConnections = new ClientConnections((server) => host.createUpstream(server, undefined));
    for (const server of config.servers) this.#add(server);
    this.#profiles = config.profiles;
    this.available = new AvailableServers(config.available ?? [], host.toolLists, {
      has: (name) => this.#entries.has(name),
      start: async (server) => {
        const entry = this.#add(server);
        this.#publish(server.name);
        // A per-user server has nothing shared to start: each user's call opens theirs.
        if (!isPerUser(server)) await entry.upstream.start();
      },
      remove: (name) => this.remove(name),
      tools: (name) => {
        const entry = this.#entries.get(name);
        return entry === undefined ? undefined : host.pinned.approved(entry.config, entry.upstream.tools);
      },
      profile: (name) => {
        const profile = this.#profiles[name];
        if (profile === undefined) throw notFound("profile", name);
        return profile;
      },
    });
  }

  /** Starts every enabled, non-lazy server concurrently; resolves when each is ready or has failed. */
  async startAll(): Promise<void> {
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

  /** Stops every connection (shared, per client, per user); safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([
      this.clientConnections.close(),
      this.#host.perUser.connections.close(),
      ...this.#pool.all().map((upstream) => upstream.close()),
    ]);
    // First lists pinned just before are in the lock file once closed; a failed write was best effort.
    await this.#host.pinned.pins?.flush().catch(() => {});
  }

  /** The configured servers with their state; with `profile`, only those it can use at all. */
  status(profile?: string): ServerStatus[] {
    const { catalog, perUser, pinned } = this.#host;
    const tools = catalog.tools(profile);
    const entries = [...this.#entries.values()];
    return (
      profile === undefined ? entries : entries.filter((e) => catalog.reaches(e.config.name, profile))
    ).map(({ config, upstream }) => {
      const status = serverStatus(config, upstream, tools.filter((t) => t.server === config.name).length);
      if (config.share === false) status.clientConnections = this.clientConnections.count(config.name);
      if (isPerUser(config)) {
        const users = perUser.connections.count(config.name);
        status.userConnections = users;
        // No shared connection to describe: ready while a user's is open, idle otherwise.
        if (config.enabled) status.state = users > 0 ? "ready" : "idle";
      }
      const changes = pinned.changes(config.name);
      if (changes.length > 0) {
        status.pinChanges = changes.length;
        status.held = changes.filter((c) => c.held).length;
      }
      return status;
    });
  }

  /** How server `name` introduced itself and its lists as last fetched; `undefined` while not connected. */
  details(name: string): ServerDetails | undefined {
    return serverDetails(this.#entries.get(name)?.upstream);
  }

  /** The config server `name` runs with (as loaded, or as last reloaded); `undefined` if none. */
  config(name: string): ServerConfig | undefined {
    return this.#entries.get(name)?.config;
  }

  /** Every configured server's config, in order. */
  configs(): ServerConfig[] {
    return [...this.#entries.values()].map((e) => e.config);
  }

  /** The configured servers' names, in order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** The server `name`; throws `NotFoundError` when there is none. */
  entry(name: string): ServerEntry {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw notFound("server", name);
    return entry;
  }

  /** The profiles now (a reloaded config replaces them; see {@link setProfiles}). */
  get profiles(): Record<string, ProfileConfig> {
    return this.#profiles;
  }

  /** Replaces the profiles: every server's lists are announced as changed. */
  setProfiles(profiles: Record<string, ProfileConfig>): void {
    this.#profiles = profiles;
    this.#host.catalog.setProfiles(profiles);
    this.#host.emit({ type: "catalog-changed", servers: this.names(), kinds: ALL_KINDS });
  }

  /** Adds a server and starts it (unless lazy, disabled or per-user). */
  async add(config: ServerConfig): Promise<void> {
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
  async remove(name: string): Promise<void> {
    const entry = this.#entries.get(name);
    if (entry === undefined) throw notFound("server", name);
    this.#entries.delete(name);
    this.#host.pinned.forget(name);
    this.available.forget(name);
    this.#host.catalog.removeServer(name);
    await Promise.all([
      this.clientConnections.closeServer(name),
      this.#host.perUser.connections.closeServer(name),
      this.#pool.release(entry.config),
    ]);
    this.#host.emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
  }

  /** Starts one server now (for lazy ones), or retries a failed one at once. */
  async start(name: string): Promise<void> {
    const { config, upstream } = this.entry(name);
    if (!config.enabled) throw disabledServer(config.name);
    if (isPerUser(config))
      throw new McplexError(
        "INVALID_ARGUMENT",
        `server "${name}" runs per user (credentials: ${typeof config.credentials === "string" ? config.credentials : "exchange"}): each signed-in user's connection starts on their first call`,
        { server: name },
      );
    await upstream.start();
  }

  /** Stops a server and starts it again (see `Hub.restartServer`). */
  async restart(name: string): Promise<void> {
    const { config, upstream } = this.entry(name);
    if (!config.enabled) throw disabledServer(config.name);
    // A per-user server's users reconnect on their next call.
    if (isPerUser(config)) return this.#host.perUser.connections.closeServer(name);
    await Promise.all([this.clientConnections.closeServer(name), upstream.close()]);
    await upstream.start();
  }

  /** Turns a server on or off at run time (see `Hub.setServerEnabled`). */
  async setEnabled(name: string, enabled: boolean): Promise<void> {
    const entry = this.entry(name);
    if (entry.config.enabled === enabled) return;
    entry.config = { ...entry.config, enabled };
    const { upstream } = entry;
    if (enabled) {
      this.#publish(name);
      this.#host.emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
      if (!entry.config.lazy && !isPerUser(entry.config)) await upstream.start().catch(() => {});
      return;
    }
    // A connection shared with a server still enabled stays up for that one.
    const users = this.#pool.usersOf(upstream);
    const stillUsed = users.some((user) => this.#entries.get(user)?.config.enabled === true);
    await Promise.all([
      this.clientConnections.closeServer(name),
      this.#host.perUser.connections.closeServer(name),
      stillUsed ? undefined : upstream.close(),
    ]);
    this.#publish(name);
    this.#host.emit({ type: "catalog-changed", servers: [name], kinds: ALL_KINDS });
  }

  /** The tool changes of pinned servers waiting for approval (all servers, or one). */
  pinChanges(server?: string): ToolChange[] {
    return this.#host.pinned.changes(server);
  }

  /** Approves the changes of pinned server `server` (see `Hub.trustTools`). */
  async trustTools(server: string, tool?: string): Promise<string[]> {
    const { pins } = this.#host.pinned;
    const entry = this.entry(server);
    if (pins === undefined || entry.config.pin === undefined || entry.config.pin === "off")
      throw new McplexError("INVALID_ARGUMENT", `server "${server}" is not pinned`, {
        server,
        hint: 'set "pin: hold-tools" on it (or at the top of the config) to pin its tools',
      });
    const trusted = await pins.trust(server, tool);
    this.#publish(server);
    this.#host.emit({ type: "catalog-changed", servers: [server], kinds: ["tools"] });
    return trusted;
  }

  /** Reads the lock file again and, when it changed, checks every pinned server's tools against it. */
  async reloadPins(): Promise<void> {
    const { pins } = this.#host.pinned;
    if (pins === undefined || !(await pins.reload())) return;
    const names = this.names();
    this.#publish(...names);
    this.#host.emit({ type: "catalog-changed", servers: names, kinds: ["tools"] });
  }

  /** Refreshes, behind, the lists past their `ttlMs`. */
  refreshStale(): void {
    const now = Date.now();
    for (const upstream of this.#pool.all()) upstream.refreshIfStale(now);
  }

  /** Waits for the starting servers that may own the exposed name `name`; `false` when there are none. */
  waitForOwners(name: string, signal?: AbortSignal): Promise<boolean> {
    return waitForOwners(name, [...this.#entries.values()], signal);
  }

  #add(config: ServerConfig): ServerEntry {
    const entry: ServerEntry = { config, upstream: this.#pool.acquire(config) };
    this.#entries.set(config.name, entry);
    this.#host.catalog.setServer(this.#snapshot(entry));
    return entry;
  }

  #isPerUser(name: string): boolean {
    const config = this.#entries.get(name)?.config;
    return config !== undefined && isPerUser(config);
  }

  /** Re-publishes these servers to the catalog. */
  #publish(...names: string[]): void {
    for (const name of names) {
      const entry = this.#entries.get(name);
      if (entry !== undefined) this.#host.catalog.setServer(this.#snapshot(entry));
    }
  }

  /** What the catalog sees of a server: a pinned one's held tools left out (see {@link PinnedTools}). */
  #snapshot(entry: ServerEntry): ServerSnapshot {
    const { perUser, pinned } = this.#host;
    if (isPerUser(entry.config)) {
      const snapshot = perUser.snapshot(entry.config);
      return pinned.filter(entry.config, snapshot, snapshot.listedAt ?? 0);
    }
    return pinned.filter(entry.config, serverSnapshot(entry.config, entry.upstream), entry.upstream.listedAt);
  }

  #onUpstreamEvent(upstream: Upstream, event: UpstreamEvent): void {
    if (this.#closed && event.type !== "state") return;
    const servers = this.#pool.usersOf(upstream);
    const emit = (e: ServerEvent) => this.#host.emit(e);
    switch (event.type) {
      case "state": {
        // Ready, or resting after an idle stop: an idle stop and its restart change nothing listed.
        const wasAvailable = this.#availability.get(upstream) ?? false;
        const isAvailable = upstream.available;
        this.#availability.set(upstream, isAvailable);
        if (wasAvailable !== isAvailable) {
          this.#publish(...servers);
          emit({ type: "catalog-changed", servers, kinds: ALL_KINDS });
        }
        const { type: _, ...rest } = event;
        for (const server of servers) emit({ type: "server-state", server, ...rest });
        return;
      }
      case "list-changed":
        this.#publish(...servers);
        if (upstream.available) emit({ type: "catalog-changed", servers, kinds: event.kinds });
        return;
      case "resource-updated": {
        // A skill's or app's URI as clients know it, under the server's name.
        const { catalog } = this.#host;
        for (const server of servers)
          emit({
            type: "resource-updated",
            server,
            uri: namespaceUri(catalog.uriNamespace(server), event.uri),
          });
        return;
      }
      case "notification": {
        const { type: _, params, ...rest } = event;
        const clean =
          params === undefined
            ? {}
            : { params: redactValue(params, (text: string) => this.#host.redact(text)) };
        for (const server of servers) emit({ type: "notification", server, ...rest, ...clean });
        return;
      }
      case "slow-call": {
        const { type: _, ...rest } = event;
        emit({ type: "slow-call", server: servers[0] ?? upstream.name, ...rest });
        return;
      }
      case "list-not-implemented":
        for (const server of servers) emit({ type: event.type, server, method: event.method });
        return;
    }
  }
}
