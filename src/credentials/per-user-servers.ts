import { Catalog } from "../catalog/catalog.js";
import { ownersOfName } from "../catalog/tool-naming.js";
import type { CatalogOptions, ServerSnapshot } from "../catalog/types.js";
import { isPerUser } from "../config/read-credentials.js";
import type { SecretSet } from "../config/redact.js";
import type { ServerConfig, UsersConfig } from "../config/types.js";
import type { Upstream } from "../upstream/upstream.js";
import type { UpstreamEvent } from "../upstream/upstream-types.js";
import { ConnectionRedactor, redactedPlan } from "./connection-redactor.js";
import { memoryCredentialVault } from "./memory-vault.js";
import { UserConnectionPool, type UserLease } from "./user-connection-pool.js";
import {
  type CredentialVault,
  signInRequired,
  type UserConnectionPlan,
  type UserCredentialSource,
  type UserRef,
} from "./user-credentials.js";
import { type ConnectUrl, userServerConfig, vaultPlans } from "./user-server-config.js";

/** What {@link PerUserServers} needs of the hub. */
export interface PerUserServersHost {
  /**
   * A connection for one user (reporting to `onEvent`, not to the catalog), not started; its
   * errors redacted with `redact` (the config's secrets and that user's own).
   */
  createUpstream(
    config: ServerConfig,
    plan: UserConnectionPlan,
    onEvent: (upstream: Upstream, event: UpstreamEvent) => void,
    redact: (text: string) => string,
  ): Upstream;
  /** `user`'s connection listed the server's tools (anew): tell listeners that user's tools changed. */
  toolsChanged(server: string, user: string): void;
  /** A user's connection was closed: idle, revoked (`closeUser`), or its server removed. */
  connectionClosed(server: string, user: string, reason: "idle" | "closed"): void;
  /** Every server configured now (enabled or not, per-user or not), in the hub's order. */
  configs(): ServerConfig[];
  /** Whether `profile` can use the server at all (see `Catalog.reaches`). */
  reaches(server: string, profile: string): boolean;
  /** What a user's catalog is built with: the hub's profiles and server order. */
  catalogOptions(): CatalogOptions;
  /** Changes whenever the hub's catalog does (a reload, a profile changed): a user's is built again. */
  revision(): number;
  /** `snapshot` (a user's connection's) with what the server's pin policy holds left out. */
  pinned(config: ServerConfig, snapshot: ServerSnapshot, listedAt: number): ServerSnapshot;
  /** The config's secrets (a user's connection redacts them and that user's own). */
  readonly secrets: SecretSet;
}

/** A user's connection lent to one call, with what that user's results are redacted of. */
export interface UserCallLease extends UserLease {
  /** The config's secrets and this user's own (values, tokens) replaced by `***`: for this user's results only. */
  readonly redact: (text: string) => string;
  /** How many secrets {@link redact} takes out. */
  readonly redactedSecrets: number;
}

/**
 * The hub's per-user servers (`credentials:` other than `shared`): each user's connections
 * ({@link UserConnectionPool}), where their plans come from (a {@link UserCredentialSource}, else
 * the vault's values), and what each user sees of such a server. The shared catalog shows no
 * tools of it: its process (or remote account) is the user's, run with the user's values, so
 * its list is the user's alone, as its results are (a description one user's value wrote must
 * not reach another's model). A user sees the tools their own connection listed, in a catalog
 * of their own ({@link userCatalog}); before their first call, none: a call by name opens their
 * connection (or answers with the connect prompt), and lists it from then on. Only tools: a
 * user's resources and prompts may be theirs alone.
 */
export class PerUserServers {
  readonly connections: UserConnectionPool;
  readonly vault: CredentialVault;
  readonly #host: PerUserServersHost;
  readonly #source: UserCredentialSource;
  readonly #connectUrl: ConnectUrl | undefined;
  /** The `users:` bounds now (a reloaded config replaces them; see {@link setUsers}). */
  #users: UsersConfig | undefined;
  /**
   * Per user key: the catalog of their connections' tools, built on demand for the hub's
   * catalog revision; dropped when one of their connections lists anew or closes.
   */
  readonly #catalogs = new Map<string, { revision: number; from: Upstream[]; catalog: Catalog }>();
  /** What each user's connection redacts: kept beside the connection, gone with it. */
  readonly #redactors = new WeakMap<Upstream, ConnectionRedactor>();
  /** The tools each user's connection last announced (as JSON). */
  readonly #announced = new WeakMap<Upstream, string>();

  constructor(
    host: PerUserServersHost,
    options: {
      vault?: CredentialVault;
      source?: UserCredentialSource;
      connectUrl?: ConnectUrl;
      users?: UsersConfig | undefined;
    },
  ) {
    this.#host = host;
    this.#users = options.users;
    this.vault = options.vault ?? memoryCredentialVault();
    this.#connectUrl = options.connectUrl;
    this.#source = options.source ?? vaultPlans(this.vault, options.connectUrl);
    this.connections = new UserConnectionPool({
      open: (user, config, signal) => this.#open(user, config, signal),
      users: () => this.#users,
      onClosed: (server, user, reason) => {
        this.#catalogs.delete(user);
        host.connectionClosed(server, user, reason);
      },
    });
  }

  /**
   * Replaces the `users:` bounds (a reloaded config): caps apply to connections opened from now
   * on (none open is closed for them), the idle timeout to connections that go idle from now on.
   */
  setUsers(users: UsersConfig | undefined): void {
    this.#users = users;
  }

  /**
   * The user's connection to `config`'s server for one call. Without a user (a static token,
   * stdio, the library) refuses with `SIGN_IN_REQUIRED`.
   */
  async acquire(
    user: UserRef | undefined,
    config: ServerConfig,
    signal?: AbortSignal,
  ): Promise<UserCallLease> {
    if (user === undefined) throw signInRequired(config);
    const lease = await this.connections.acquire(user, config, signal);
    const redactor = this.#redactors.get(lease.upstream);
    return {
      upstream: lease.upstream,
      release: lease.release,
      redact: redactor?.redact ?? ((text) => this.#host.secrets.redact(text)),
      get redactedSecrets() {
        return redactor?.size ?? 0;
      },
    };
  }

  /** How many secrets the user's started connection to `server` redacts; `undefined` without one. */
  redactedSecrets(userKey: string, server: string): number | undefined {
    const upstream = this.connections.started(userKey).get(server);
    return upstream === undefined ? undefined : this.#redactors.get(upstream)?.size;
  }

  /** What the shared catalog sees of a per-user server: no one's tools. */
  snapshot(config: ServerConfig): ServerSnapshot {
    const snapshot: ServerSnapshot = {
      server: config.name,
      filter: config.tools,
      // Callable whenever enabled: the call opens the caller's own connection.
      state: config.enabled ? "ready" : "unavailable",
      tools: [],
      listedAt: 0,
    };
    if (config.prefix !== undefined) snapshot.prefix = config.prefix;
    if (config.overrides !== undefined) snapshot.overrides = config.overrides;
    return snapshot;
  }

  /** Whether `user`'s own connection to the server has started (and so listed its tools). */
  listed(user: UserRef | undefined, name: string): boolean {
    return user !== undefined && this.connections.started(user.key).has(name);
  }

  /**
   * The tools of `user`'s own started connections to per-user servers, named and filtered as the
   * hub's catalog would name them (prefix, `tools:` filter, profiles, pins); `undefined` while
   * the user has none. Nobody else's list is in it.
   */
  userCatalog(user: UserRef | undefined): Catalog | undefined {
    if (user === undefined) return undefined;
    const revision = this.#host.revision();
    const started = this.connections.started(user.key);
    const from = [...started.values()];
    const cached = this.#catalogs.get(user.key);
    if (cached?.revision === revision && sameItems(cached.from, from)) return cached.catalog;
    if (started.size === 0) {
      this.#catalogs.delete(user.key);
      return undefined;
    }
    const snapshots: ServerSnapshot[] = [];
    for (const config of this.#configs()) {
      const upstream = started.get(config.name);
      if (upstream === undefined || !config.enabled) continue;
      const snapshot: ServerSnapshot = {
        ...this.snapshot(config),
        state: "ready",
        tools: upstream.tools,
        listedAt: upstream.listedAt,
      };
      snapshots.push(this.#host.pinned(config, snapshot, upstream.listedAt));
    }
    const catalog = Catalog.build(snapshots, this.#host.catalogOptions());
    this.#catalogs.set(user.key, { revision, from, catalog });
    return catalog;
  }

  /**
   * Opens `user`'s own connections to the per-user servers reachable through `profile` that
   * they hold none to yet (see `Hub.openUserServers`). Nothing without a user.
   */
  async openAll(
    user: UserRef | undefined,
    options: { profile?: string; signal?: AbortSignal },
  ): Promise<void> {
    if (user === undefined) return;
    const opening = this.#configs().filter(
      (c) =>
        c.enabled &&
        !this.listed(user, c.name) &&
        (options.profile === undefined || this.#host.reaches(c.name, options.profile)),
    );
    await Promise.allSettled(
      opening.map(async (config) => (await this.acquire(user, config, options.signal)).release()),
    );
  }

  /**
   * Opens the caller's own connection to each per-user server that may own the exposed name
   * `name` and whose tools no user's connection has listed yet, so that the first user's first
   * call finds its tool. Without a user, such a server refuses (sign-in needed); a user who must
   * connect first gets that error. `false` when there is no such server.
   */
  async openOwners(
    name: string,
    options: { profile?: string; signal?: AbortSignal; user?: UserRef },
  ): Promise<boolean> {
    const unlisted = this.#configs().filter((c) => c.enabled && !this.listed(options.user, c.name));
    if (unlisted.length === 0) return false;
    const owners = ownersOfName(name, this.#host.configs());
    const opening = unlisted.filter(
      (c) =>
        (owners === undefined || owners.includes(c.name)) &&
        (options.profile === undefined || this.#host.reaches(c.name, options.profile)),
    );
    if (opening.length === 0) return false;
    // A name that can only be this server's answers with its refusal; a guess at any server, not.
    const only = owners?.length === 1;
    const results = await Promise.allSettled(
      opening.map(async (config) => {
        const lease = await this.acquire(options.user, config, options.signal);
        lease.release();
      }),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (only && failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return true;
  }

  /** The per-user servers configured now (enabled or not). */
  #configs(): ServerConfig[] {
    return this.#host.configs().filter((c) => isPerUser(c));
  }

  async #open(user: UserRef, config: ServerConfig, signal: AbortSignal | undefined): Promise<Upstream> {
    const plan = await this.#source.plan(user, config, signal);
    const own = userServerConfig(config, plan, user, this.#connectUrl);
    // The user's values and tokens are redacted from this user's results only: in a redactor
    // shared by all, a guess of them would come back as `***` to anyone (and slow everyone).
    const redactor = new ConnectionRedactor(this.#host.secrets, plan.values);
    const upstream = this.#host.createUpstream(
      own,
      redactedPlan(plan, redactor),
      (upstream, event) => this.#onEvent(config, user, upstream, event),
      redactor.redact,
    );
    this.#redactors.set(upstream, redactor);
    return upstream;
  }

  /**
   * A user's connection lists its tools: that user's catalog is built again. Other events of a
   * user's connection (its log messages, resource updates) are that user's and go to no one else.
   */
  #onEvent(config: ServerConfig, user: UserRef, upstream: Upstream, event: UpstreamEvent): void {
    const listed =
      (event.type === "state" && event.state === "ready") ||
      (event.type === "list-changed" && event.kinds.includes("tools"));
    if (!listed) return;
    // Its start reports the list twice (listed, then ready): the user hears of it once.
    const tools = JSON.stringify(upstream.tools);
    if (this.#announced.get(upstream) === tools) return;
    this.#announced.set(upstream, tools);
    this.#catalogs.delete(user.key);
    this.#host.toolsChanged(config.name, user.key);
  }
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
