import { Catalog } from "../catalog/catalog.js";
import type { CatalogOptions, ServerSnapshot } from "../catalog/types.js";
import type { SecretSet } from "../config/redact.js";
import type { ServerConfig, UsersConfig } from "../config/types.js";
import type { HubEvent } from "../hub/hub-types.js";
import type { OAuthHost, OAuthRecord } from "../upstream/oauth.js";
import type { Upstream } from "../upstream/upstream.js";
import type { UpstreamEvent } from "../upstream/upstream-types.js";
import { ConnectionRedactor } from "./connection-redactor.js";
import { memoryCredentialVault } from "./memory-vault.js";
import { UserConnections, type UserLease } from "./user-connection-pool.js";
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
  /** The `users:` block as configured now. */
  users(): UsersConfig | undefined;
  /** `user`'s connection listed the server's tools (anew): tell listeners that user's tools changed. */
  toolsChanged(server: string, user: string): void;
  /** The per-user servers configured now (enabled or not). */
  configs(): ServerConfig[];
  /** What a user's catalog is built with: the hub's profiles and server order. */
  catalogOptions(): CatalogOptions;
  /** Changes whenever the hub's catalog does (a reload, a profile changed): a user's is built again. */
  revision(): number;
  /** `snapshot` (a user's connection's) with what the server's pin policy holds left out. */
  pinned(config: ServerConfig, snapshot: ServerSnapshot, listedAt: number): ServerSnapshot;
  /** The config's secrets (a user's connection redacts them and that user's own). */
  readonly secrets: SecretSet;
  emit(event: HubEvent): void;
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
 * ({@link UserConnections}), where their plans come from (a {@link UserCredentialSource}, else
 * the vault's values), and what each user sees of such a server. The shared catalog shows no
 * tools of it: its process (or remote account) is the user's, run with the user's values, so
 * its list is the user's alone, as its results are (a description one user's value wrote must
 * not reach another's model). A user sees the tools their own connection listed, in a catalog
 * of their own ({@link userCatalog}); before their first call, none: a call by name opens their
 * connection (or answers with the connect prompt), and lists it from then on. Only tools: a
 * user's resources and prompts may be theirs alone.
 */
export class PerUserServers {
  readonly connections: UserConnections;
  readonly vault: CredentialVault;
  readonly #host: PerUserServersHost;
  readonly #source: UserCredentialSource;
  readonly #connectUrl: ConnectUrl | undefined;
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
    options: { vault?: CredentialVault; source?: UserCredentialSource; connectUrl?: ConnectUrl },
  ) {
    this.#host = host;
    this.vault = options.vault ?? memoryCredentialVault();
    this.#connectUrl = options.connectUrl;
    this.#source = options.source ?? vaultPlans(this.vault, options.connectUrl);
    this.connections = new UserConnections({
      open: (user, config, signal) => this.#open(user, config, signal),
      users: () => host.users(),
      onClosed: (server, user, reason) => {
        this.#catalogs.delete(user);
        host.emit({ type: "user-connection-closed", server, user, reason });
      },
    });
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
    for (const config of this.#host.configs()) {
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

/** `plan` with every token it gives (exchanged, OAuth access and refresh) added to `redactor`. */
function redactedPlan(plan: UserConnectionPlan, redactor: ConnectionRedactor): UserConnectionPlan {
  const out: UserConnectionPlan = { ...plan };
  const { bearer, oauth } = plan;
  if (bearer !== undefined) {
    const given = async (signal?: AbortSignal) => {
      const token = await bearer(signal);
      redactor.addToken(token);
      return token;
    };
    const invalidate = (bearer as { invalidate?: (token: string) => void }).invalidate;
    out.bearer =
      invalidate === undefined ? given : Object.assign(given, { invalidate: invalidate.bind(bearer) });
  }
  if (oauth !== undefined) out.oauth = redactedOAuth(oauth, redactor);
  return out;
}

function redactedOAuth(oauth: OAuthHost, redactor: ConnectionRedactor): OAuthHost {
  const seen = (record: OAuthRecord | undefined) => {
    redactor.addToken(record?.tokens?.access_token);
    redactor.addToken(record?.tokens?.refresh_token);
    return record;
  };
  const { store } = oauth;
  return {
    ...oauth,
    store: {
      load: async (server) => seen(await store.load(server)),
      save: (server, record) => store.save(server, seen(record)!),
      ...(store.exclusive === undefined ? {} : { exclusive: store.exclusive.bind(store) }),
    },
  };
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
