/**
 * Where the `jti` of every DPoP proof the gateway accepted is remembered for as long as the
 * proof could still pass (its `iat` window), so that a captured proof is refused when it comes
 * again. `claim` answers `true` the first time a key is claimed within `ttlMs`, `false` after.
 * A gateway alone keeps them in memory ({@link MemoryProofReplays}); the replicas of a cluster
 * share them through Redis (src/cluster/redis-dpop-replay.ts), so a proof replayed at another
 * replica is refused too.
 *
 * @example
 * const replays: ProofReplays = new MemoryProofReplays();
 * await replays.claim("jkt:jti", 300_000); // true
 * await replays.claim("jkt:jti", 300_000); // false: seen
 */
export interface ProofReplays {
  claim(key: string, ttlMs: number): boolean | Promise<boolean>;
}

/** Proofs remembered at most; past it the oldest are dropped (see {@link MemoryProofReplays}). */
const MAX_REMEMBERED = 200_000;

/**
 * {@link ProofReplays} in this process's memory, each key until its time is up. Bounded: past
 * {@link MAX_REMEMBERED} live keys the oldest is forgotten, which only a flood of valid proofs
 * (each signed by a key a token is bound to) can cause.
 */
export class MemoryProofReplays implements ProofReplays {
  /** Key → when it may be claimed again (ms since the epoch), in insertion (hence expiry) order. */
  readonly #seen = new Map<string, number>();
  readonly #max: number;

  constructor(options: { max?: number } = {}) {
    this.#max = options.max ?? MAX_REMEMBERED;
  }

  claim(key: string, ttlMs: number): boolean {
    const now = Date.now();
    this.#sweep(now);
    const until = this.#seen.get(key);
    if (until !== undefined && until > now) return false;
    this.#seen.delete(key);
    if (this.#seen.size >= this.#max) this.#seen.delete(this.#seen.keys().next().value!);
    this.#seen.set(key, now + ttlMs);
    return true;
  }

  /** Keys remembered now, for tests. */
  get size(): number {
    return this.#seen.size;
  }

  /** Drops expired keys from the front (the map's order is the claims', every ttl the same). */
  #sweep(now: number): void {
    for (const [key, until] of this.#seen) {
      if (until > now) return;
      this.#seen.delete(key);
    }
  }
}
