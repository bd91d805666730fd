import type { ServerConfig } from "../config/types.js";
import type { Upstream } from "../upstream/upstream.js";
import { connectionKey } from "./connection-key.js";

/**
 * The hub's connections: server definitions that are the same connection (the same launch:
 * command, args, env, cwd and sandbox; or same URL and credentials; see {@link connectionKey})
 * share one {@link Upstream}.
 */
export class UpstreamPool {
  readonly #byKey = new Map<string, { upstream: Upstream; users: Set<string> }>();
  readonly #create: (config: ServerConfig) => Upstream;

  constructor(create: (config: ServerConfig) => Upstream) {
    this.#create = create;
  }

  /** The upstream for a server, created or shared. */
  acquire(config: ServerConfig): Upstream {
    const key = connectionKey(config);
    let shared = this.#byKey.get(key);
    if (shared === undefined) {
      shared = { upstream: this.#create(config), users: new Set() };
      this.#byKey.set(key, shared);
    }
    shared.users.add(config.name);
    return shared.upstream;
  }

  /** Gives a server's use back; resolves when the upstream is closed, if it was the last user. */
  async release(config: ServerConfig): Promise<void> {
    const key = connectionKey(config);
    const shared = this.#byKey.get(key);
    if (shared === undefined) return;
    shared.users.delete(config.name);
    if (shared.users.size > 0) return;
    this.#byKey.delete(key);
    await shared.upstream.close();
  }

  /** The servers that use an upstream. */
  usersOf(upstream: Upstream): string[] {
    for (const shared of this.#byKey.values()) if (shared.upstream === upstream) return [...shared.users];
    return [];
  }

  /** Every upstream, once. */
  all(): Upstream[] {
    return [...this.#byKey.values()].map((s) => s.upstream);
  }
}
