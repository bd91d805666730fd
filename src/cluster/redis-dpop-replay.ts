import { createHash } from "node:crypto";
import type { RedisLink } from "./redis-link.js";

/** Proofs remembered here while Redis is away, at most (the oldest go first). */
const MAX_LOCAL = 100_000;

/**
 * The `jti`s of accepted DPoP proofs shared by every replica (`SET NX PX` in Redis), so that a
 * proof captured on its way to one replica is refused at any other within its window. It is the
 * auth layer's `ProofReplays` (src/auth/dpop-replay.ts), which the assembly hands it as. While
 * Redis is out of reach (or does not answer) each replica remembers its own: a replay at the
 * same replica is still refused, one at another is not, for the length of the outage.
 */
export class RedisDpopReplays {
  readonly #link: RedisLink;
  /**
   * Key → when it may be claimed again: every claim this replica granted, so that its own
   * replays are refused through an outage of Redis too.
   */
  readonly #local = new Map<string, number>();

  constructor(link: RedisLink) {
    this.#link = link;
  }

  claim(key: string, ttlMs: number): boolean | Promise<boolean> {
    if (!this.#link.up) return this.#claimLocally(key, ttlMs);
    // Hashed: Redis holds no key thumbprint or proof id of a client.
    const redisKey = `mcplex:dpop:${createHash("sha256").update(key).digest("base64url")}`;
    return this.#link.client
      .set(redisKey, "1", { condition: "NX", expiration: { type: "PX", value: ttlMs } })
      .then(
        (set) => set !== null && this.#claimLocally(key, ttlMs),
        () => this.#claimLocally(key, ttlMs),
      );
  }

  #claimLocally(key: string, ttlMs: number): boolean {
    const now = Date.now();
    // Expired ones leave from the front: claims come in order, each for the same window.
    for (const [old, at] of this.#local) {
      if (at > now) break;
      this.#local.delete(old);
    }
    const until = this.#local.get(key);
    if (until !== undefined && until > now) return false;
    if (this.#local.size >= MAX_LOCAL) this.#local.delete(this.#local.keys().next().value!);
    this.#local.set(key, now + ttlMs);
    return true;
  }
}
