import type { Tool } from "@modelcontextprotocol/client";
import type { ServerSnapshot } from "../catalog/types.js";
import type { ServerConfig, UsersConfig } from "../config/types.js";
import { memoryCredentialVault } from "../credentials/memory-vault.js";
import {
  type CredentialVault,
  signInRequired,
  type UserConnectionPlan,
  type UserCredentialSource,
  type UserRef,
} from "../credentials/user-credentials.js";
import type { ToolListStore } from "../recording/tool-list-store.js";
import type { Upstream } from "../upstream/upstream.js";
import type { UpstreamEvent } from "../upstream/upstream-types.js";
import type { HubEvent } from "./hub-types.js";
import { definitionHash } from "./tool-lists.js";
import { UserConnections, type UserLease } from "./user-connections.js";
import { type ConnectUrl, userServerConfig, vaultPlans } from "./user-servers.js";

/** What {@link PerUserServers} needs of the hub. */
export interface PerUserServersHost {
  /** A connection for one user (reporting to `onEvent`, not to the catalog), not started. */
  createUpstream(
    config: ServerConfig,
    plan: UserConnectionPlan,
    onEvent: (upstream: Upstream, event: UpstreamEvent) => void,
  ): Upstream;
  /** The `users:` block as configured now. */
  users(): UsersConfig | undefined;
  /** The server's tools changed: publish its snapshot again and tell listeners. */
  toolsChanged(server: string): void;
  /** Values to redact from now on (a user's `${user:NAME}` values). */
  addSecrets(values: string[]): void;
  emit(event: HubEvent): void;
  readonly toolLists: ToolListStore;
}

/**
 * The hub's per-user servers (`credentials:` other than `shared`): each user's connections
 * ({@link UserConnections}), where their plans come from (a {@link UserCredentialSource}, else
 * the vault's values), and what the catalog shows of such a server, which has no shared
 * connection: the tools of the last list any user's connection gave (kept in the tool-list
 * store as a running server's are, and read from it at start), none before. Only tools: a
 * user's resources and prompts may be theirs alone.
 */
export class PerUserServers {
  readonly connections: UserConnections;
  readonly vault: CredentialVault;
  readonly #host: PerUserServersHost;
  readonly #source: UserCredentialSource;
  readonly #connectUrl: ConnectUrl | undefined;
  /** Per server: the tools last listed by a user's connection (or read from the store). */
  readonly #tools = new Map<string, { tools: readonly Tool[]; listedAt: number }>();

  constructor(
    host: PerUserServersHost,
    options: { vault?: CredentialVault; source?: UserCredentialSource; connectUrl?: ConnectUrl },
  ) {
    this.#host = host;
    this.vault = options.vault ?? memoryCredentialVault();
    this.#connectUrl = options.connectUrl;
    this.#source = options.source ?? vaultPlans(this.vault, options.connectUrl);
    this.connections = new UserConnections({
      open: (user, config, signal) => this.#open(user, config, signal),
      users: () => host.users(),
      onClosed: (server, user, reason) => host.emit({ type: "user-connection-closed", server, user, reason }),
    });
  }

  /**
   * The user's connection to `config`'s server for one call. Without a user (a static token,
   * stdio, the library) refuses with `SIGN_IN_REQUIRED`.
   */
  acquire(user: UserRef | undefined, config: ServerConfig, signal?: AbortSignal): Promise<UserLease> {
    if (user === undefined) return Promise.reject(signInRequired(config));
    return this.connections.acquire(user, config, signal);
  }

  /** What the catalog sees of a per-user server. */
  snapshot(config: ServerConfig): ServerSnapshot {
    const listed = this.#tools.get(config.name);
    const snapshot: ServerSnapshot = {
      server: config.name,
      filter: config.tools,
      // Callable whenever enabled: the call opens the caller's own connection.
      state: config.enabled ? "ready" : "unavailable",
      tools: listed?.tools ?? [],
      listedAt: listed?.listedAt ?? 0,
    };
    if (config.prefix !== undefined) snapshot.prefix = config.prefix;
    return snapshot;
  }

  /** Whether any user's connection (or the store) has given the server's tools yet. */
  listed(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Reads the server's last-seen tools from the store, unless a user's connection gave them since. */
  async load(config: ServerConfig): Promise<void> {
    const stored = await this.#host.toolLists.get(config.name).catch(() => undefined);
    if (stored === undefined || stored.definition !== definitionHash(config) || this.#tools.has(config.name))
      return;
    this.#tools.set(config.name, {
      tools: stored.tools as unknown as Tool[],
      listedAt: Date.parse(stored.savedAt),
    });
    this.#host.toolsChanged(config.name);
  }

  /** Forgets a removed server's tools. */
  forget(name: string): void {
    this.#tools.delete(name);
  }

  async #open(user: UserRef, config: ServerConfig, signal: AbortSignal | undefined): Promise<Upstream> {
    const plan = await this.#source.plan(user, config, signal);
    const own = userServerConfig(config, plan, user, this.#connectUrl);
    // A user's values are redacted like the config's secrets: from errors, logs and lists.
    const values = Object.values(plan.values ?? {}).filter((value) => value.length >= 4);
    if (values.length > 0) this.#host.addSecrets(values);
    return this.#host.createUpstream(own, plan, (upstream, event) => this.#onEvent(config, upstream, event));
  }

  /**
   * A user's connection lists its tools: they become the server's. Other events of a user's
   * connection (its log messages, resource updates) are that user's and go to no one else.
   */
  #onEvent(config: ServerConfig, upstream: Upstream, event: UpstreamEvent): void {
    const listed =
      (event.type === "state" && event.state === "ready") ||
      (event.type === "list-changed" && event.kinds.includes("tools"));
    if (!listed) return;
    const tools = upstream.tools;
    const before = this.#tools.get(config.name);
    if (before !== undefined && JSON.stringify(before.tools) === JSON.stringify(tools)) return;
    this.#tools.set(config.name, { tools, listedAt: upstream.listedAt });
    this.#host.toolsChanged(config.name);
    void this.#host.toolLists
      .save({
        server: config.name,
        definition: definitionHash(config),
        tools: tools as unknown as Record<string, unknown>[],
      })
      .catch(() => {});
  }
}
