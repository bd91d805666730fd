import { DEFAULT_MAX_USERS, USERS_DEFAULTS } from "../config/read-credentials.js";
import type { ServerConfig, UsersConfig } from "../config/types.js";
import { UpstreamUnavailableError } from "../errors.js";
import type { Upstream } from "../upstream/upstream.js";
import type { UserRef } from "./user-credentials.js";

/** What {@link UserConnectionPool} needs of whoever holds it (the per-user servers). */
export interface UserConnectionPoolHost {
  /**
   * The connection of `user` to `config`'s server, not started: the user's plan asked for, the
   * `${user:NAME}` values filled. Rejects with `ConnectRequiredError` when the user must
   * connect first, `SIGN_IN_REQUIRED`, `TOKEN_EXCHANGE_FAILED`...
   */
  open(user: UserRef, config: ServerConfig, signal?: AbortSignal): Promise<Upstream>;
  /** The `users:` block as configured now (a reload may change it). */
  users(): UsersConfig | undefined;
  /** A user's connection was closed: idle, revoked (closeUser), or its server removed. */
  onClosed?(server: string, user: string, reason: "idle" | "closed"): void;
}

/** A connection lent to one call; {@link release} gives it back (it may then go idle). */
export interface UserLease {
  readonly upstream: Upstream;
  release(): void;
}

/** One user's connection to one server. */
interface Held {
  readonly started: Promise<Upstream>;
  /** The connection once it started. */
  upstream?: Upstream;
  /** Calls using it now (and waiting for its start): it goes idle only at none. */
  inFlight: number;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * Connections of per-user servers (`credentials:` other than `shared`), one per (signed-in
 * user, server): a stdio server runs one process per user, with that user's values; a remote
 * server is called with that user's token. Modelled on `ClientConnections` (one per client
 * session); keyed by the user's {@link UserRef.key}, so two users never share one, nor the
 * server requests and roots that go with a connection.
 *
 * A user's connection opens on their first call, closes after `users.idleTimeout` without a
 * call (none in flight), and on {@link closeUser} (disconnect, revoke). Bounded three ways,
 * each refusal naming its bound: `maxUsers` per server, `users.maxPerUser` per user,
 * `users.maxConnections` in all.
 */
export class UserConnectionPool {
  readonly #host: UserConnectionPoolHost;
  /** Per user key: server name -> its connection, started or starting. */
  readonly #byUser = new Map<string, Map<string, Held>>();
  /** Per server: how many users hold a connection. */
  readonly #perServer = new Map<string, number>();
  #total = 0;
  #closed = false;

  constructor(host: UserConnectionPoolHost) {
    this.#host = host;
  }

  /**
   * The user's own connection to `config`'s server, started (the user's first call opens it),
   * lent to one call. Rejects past a cap, or with what opening it failed with; a connection
   * that did not start is not kept, so the next call tries again.
   */
  async acquire(user: UserRef, config: ServerConfig, signal?: AbortSignal): Promise<UserLease> {
    const held = this.#held(user, config, signal);
    held.inFlight++;
    clearTimeout(held.idleTimer);
    held.idleTimer = undefined;
    let upstream: Upstream;
    try {
      upstream = await held.started;
    } catch (error) {
      held.inFlight--;
      throw error;
    }
    let released = false;
    return {
      upstream,
      release: () => {
        if (released) return;
        released = true;
        if (--held.inFlight === 0) this.#armIdle(user.key, config.name, held);
      },
    };
  }

  /** The connection held, or a new one within the caps. */
  #held(user: UserRef, config: ServerConfig, signal: AbortSignal | undefined): Held {
    const existing = this.#byUser.get(user.key)?.get(config.name);
    if (existing !== undefined) return existing;
    if (this.#closed)
      throw new UpstreamUnavailableError(`${config.name}: the hub is closing`, { server: config.name });
    this.#checkCaps(user, config);
    let own = this.#byUser.get(user.key);
    if (own === undefined) {
      own = new Map();
      this.#byUser.set(user.key, own);
    }
    this.#perServer.set(config.name, (this.#perServer.get(config.name) ?? 0) + 1);
    this.#total++;
    let opened: Upstream | undefined;
    const started = (async () => {
      opened = await this.#host.open(user, config, signal);
      await opened.start();
      return opened;
    })();
    const held: Held = { started, inFlight: 0, idleTimer: undefined };
    started.then(
      (upstream) => {
        held.upstream = upstream;
      },
      () => {},
    );
    own.set(config.name, held);
    started.catch(() => {
      this.#forget(user.key, config.name, held);
      void opened?.close().catch(() => {});
    });
    return held;
  }

  #checkCaps(user: UserRef, config: ServerConfig): void {
    const limits = { ...USERS_DEFAULTS, ...this.#host.users() };
    const maxUsers = config.maxUsers ?? DEFAULT_MAX_USERS;
    const users = this.#perServer.get(config.name) ?? 0;
    const server = config.name;
    if (users >= maxUsers)
      throw new UpstreamUnavailableError(
        `${server}: ${users} users already hold a connection of their own (credentials: per-user, maxUsers: ${maxUsers}); ` +
          `call again once one has gone idle (users.idleTimeout), or raise servers.${server}.maxUsers`,
        { server },
      );
    const mine = this.#byUser.get(user.key)?.size ?? 0;
    if (mine >= limits.maxPerUser)
      throw new UpstreamUnavailableError(
        `${server}: you already hold ${mine} per-user connections (users.maxPerUser: ${limits.maxPerUser}); ` +
          "call again once one has gone idle (users.idleTimeout), or ask the operator to raise users.maxPerUser",
        { server },
      );
    if (this.#total >= limits.maxConnections)
      throw new UpstreamUnavailableError(
        `${server}: ${this.#total} per-user connections are open, all users together (users.maxConnections: ${limits.maxConnections}); ` +
          "call again once one has gone idle (users.idleTimeout), or raise users.maxConnections",
        { server },
      );
  }

  #armIdle(userKey: string, server: string, held: Held): void {
    if (this.#closed) return;
    const ms = this.#host.users()?.idleTimeout ?? USERS_DEFAULTS.idleTimeout;
    held.idleTimer = setTimeout(() => {
      if (held.inFlight > 0 || this.#byUser.get(userKey)?.get(server) !== held) return;
      this.#forget(userKey, server, held);
      void this.#stop(held).then(() => this.#host.onClosed?.(server, userKey, "idle"));
    }, ms);
    held.idleTimer.unref();
  }

  /**
   * Closes the user's connection to `server`, or all of theirs (a disconnect, a revoke): calls
   * in flight on it fail, the next call opens a new one with what the vault holds then.
   * Resolves with the servers whose connection was closed.
   */
  async closeUser(userKey: string, server?: string): Promise<string[]> {
    const own = this.#byUser.get(userKey);
    if (own === undefined) return [];
    const names = server === undefined ? [...own.keys()] : own.has(server) ? [server] : [];
    await Promise.all(
      names.map((name) => {
        const held = own.get(name)!;
        this.#forget(userKey, name, held);
        return this.#stop(held).then(() => this.#host.onClosed?.(name, userKey, "closed"));
      }),
    );
    return names;
  }

  /** Closes every user's connection to one server (it was removed, replaced or turned off). */
  async closeServer(name: string): Promise<void> {
    const users = [...this.#byUser.entries()].filter(([, own]) => own.has(name)).map(([user]) => user);
    await Promise.all(users.map((user) => this.closeUser(user, name)));
  }

  /** Closes everything; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#byUser.keys()].map((user) => this.closeUser(user)));
  }

  /** How many users hold a connection to the server now. */
  count(name: string): number {
    return this.#perServer.get(name) ?? 0;
  }

  /** The servers the user holds a connection to now. */
  servers(userKey: string): string[] {
    return [...(this.#byUser.get(userKey)?.keys() ?? [])];
  }

  /** The user's connections that have started, by server. */
  started(userKey: string): Map<string, Upstream> {
    const out = new Map<string, Upstream>();
    for (const [server, held] of this.#byUser.get(userKey) ?? [])
      if (held.upstream !== undefined) out.set(server, held.upstream);
    return out;
  }

  async #stop(held: Held): Promise<void> {
    clearTimeout(held.idleTimer);
    await held.started.then(
      (upstream) => upstream.close(),
      () => {},
    );
  }

  #forget(userKey: string, server: string, held: Held): void {
    const own = this.#byUser.get(userKey);
    if (own?.get(server) !== held) return;
    own.delete(server);
    if (own.size === 0) this.#byUser.delete(userKey);
    this.#total--;
    const left = (this.#perServer.get(server) ?? 1) - 1;
    if (left > 0) this.#perServer.set(server, left);
    else this.#perServer.delete(server);
  }
}
