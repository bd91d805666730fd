import type { ServerConfig } from "../config/types.js";
import { UpstreamUnavailableError } from "../errors.js";
import type { Upstream } from "../upstream/upstream.js";

/** Client sessions that may hold a connection of their own to one `share: false` server. */
export const DEFAULT_MAX_SESSIONS = 16;

/**
 * Connections of `share: false` servers, one per client session: some servers keep state per
 * connection (the roots they were given, a login, a working directory), which a connection
 * shared by several clients would mix up. A session's connection starts on its first call and
 * closes with the session ({@link release}); at most `maxSessions` sessions hold one per server.
 *
 * A client is any object that stands for one session (the gateway passes its session); the map
 * is keyed by it, so nothing about the client needs to be copied here.
 */
export class ClientConnections {
  readonly #create: (config: ServerConfig) => Upstream;
  /** Per client: server name -> its connection, started or starting. */
  readonly #byClient = new Map<object, Map<string, Promise<Upstream>>>();
  /** Per server: how many clients hold a connection. */
  readonly #counts = new Map<string, number>();

  constructor(create: (config: ServerConfig) => Upstream) {
    this.#create = create;
  }

  /**
   * The client's own connection to `config`'s server, started; the first call of a session
   * creates it. Rejects past the server's `maxSessions`, or with the start error.
   */
  acquire(client: object, config: ServerConfig): Promise<Upstream> {
    let own = this.#byClient.get(client);
    const existing = own?.get(config.name);
    if (existing !== undefined) return existing;
    const limit = config.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const count = this.#counts.get(config.name) ?? 0;
    if (count >= limit) {
      return Promise.reject(
        new UpstreamUnavailableError(
          `${config.name}: ${count} client sessions already have their own connection (share: false, ` +
            `maxSessions: ${limit}); close one, or raise maxSessions`,
          { server: config.name },
        ),
      );
    }
    if (own === undefined) {
      own = new Map();
      this.#byClient.set(client, own);
    }
    this.#counts.set(config.name, count + 1);
    const upstream = this.#create(config);
    const started = upstream.start().then(
      () => upstream,
      async (error: unknown) => {
        // A connection that did not start is not kept: the session's next call tries again.
        this.#forget(client, config.name);
        await upstream.close();
        throw error;
      },
    );
    own.set(config.name, started);
    return started;
  }

  /** Closes every connection the client holds; resolves when they are closed. */
  async release(client: object): Promise<void> {
    const own = this.#byClient.get(client);
    if (own === undefined) return;
    const names = [...own.keys()];
    const upstreams = [...own.values()];
    for (const name of names) this.#forget(client, name);
    await Promise.all(
      upstreams.map((p) =>
        p.then(
          (u) => u.close(),
          () => {},
        ),
      ),
    );
  }

  /** Closes every client's connection to one server (it was removed or replaced). */
  async closeServer(name: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [client, own] of this.#byClient) {
      const upstream = own.get(name);
      if (upstream === undefined) continue;
      this.#forget(client, name);
      closing.push(
        upstream.then(
          (u) => u.close(),
          () => {},
        ),
      );
    }
    await Promise.all(closing);
  }

  /** Closes everything; safe to call twice. */
  async close(): Promise<void> {
    await Promise.all([...this.#byClient.keys()].map((client) => this.release(client)));
  }

  /** How many client sessions hold a connection to the server now. */
  count(name: string): number {
    return this.#counts.get(name) ?? 0;
  }

  #forget(client: object, name: string): void {
    const own = this.#byClient.get(client);
    if (own?.delete(name) !== true) return;
    if (own.size === 0) this.#byClient.delete(client);
    const left = (this.#counts.get(name) ?? 1) - 1;
    if (left > 0) this.#counts.set(name, left);
    else this.#counts.delete(name);
  }
}
