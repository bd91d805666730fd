import { McplexError } from "../errors.js";

/** Options of a {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Sustained requests per second per key (may be fractional: `0.5` is one every 2 s). */
  ratePerSecond: number;
  /** Requests a key may make at once after being idle. Default: `max(1, ratePerSecond)`. */
  burst?: number;
  /** Most keys tracked at once; past it the least recently used key is forgotten. Default 10 000. */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
}

/** The outcome of {@link RateLimiter.take}; `retryAfterSeconds` is whole seconds, for `Retry-After`. */
export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

const OK: RateDecision = { ok: true };
/** Takes between eviction sweeps when the map is under its bound. */
const SWEEP_EVERY = 1024;

/**
 * A token bucket per key (a token's `key`, or a client address): each key holds up to
 * `burst` tokens, refilled at `ratePerSecond`; a request takes one. O(1) per call.
 *
 * Memory stays bounded: keys are kept in least-recently-used order, a key whose bucket
 * has refilled completely is dropped (forgetting it changes nothing: a new bucket starts
 * full), and past `maxKeys` the least recently used key is dropped even if not full
 * (under a flood of distinct keys, an old key may get a fresh burst: leniency, not
 * unbounded memory).
 *
 * @example
 * const limiter = new RateLimiter({ ratePerSecond: 20, burst: 40 });
 * const decision = limiter.take(auth.token?.key ?? req.socket.remoteAddress ?? "");
 * if (!decision.ok) res.writeHead(429, { "Retry-After": String(decision.retryAfterSeconds) }).end();
 */
export class RateLimiter {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly #maxKeys: number;
  /** Refill per ms. */
  readonly #perMs: number;
  /** Idle time after which a bucket is full again (ms). */
  readonly #fullAfterMs: number;
  readonly #buckets = new Map<string, Bucket>();
  #untilSweep = SWEEP_EVERY;

  constructor(options: RateLimiterOptions) {
    const { ratePerSecond } = options;
    const burst = options.burst ?? Math.max(1, ratePerSecond);
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) {
      throw new McplexError("INVALID_ARGUMENT", `rate limit must be a positive number, got ${ratePerSecond}`);
    }
    if (!(burst >= 1) || !Number.isFinite(burst)) {
      throw new McplexError("INVALID_ARGUMENT", `rate limit burst must be at least 1, got ${burst}`);
    }
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.#maxKeys = Math.max(1, options.maxKeys ?? 10_000);
    this.#perMs = ratePerSecond / 1000;
    this.#fullAfterMs = burst / this.#perMs;
  }

  /** How many keys are tracked now. */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes one token from `key`'s bucket, or says how long until one is there. */
  take(key: string, now: number = Date.now()): RateDecision {
    const buckets = this.#buckets;
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now };
    } else {
      // A clock going backwards refills nothing rather than draining the bucket.
      const elapsed = Math.max(0, now - bucket.at);
      bucket.tokens = Math.min(this.burst, bucket.tokens + elapsed * this.#perMs);
      bucket.at = now;
      buckets.delete(key); // re-inserted below: Map order is least recently used first
    }
    buckets.set(key, bucket);
    if (buckets.size > this.#maxKeys || --this.#untilSweep <= 0) this.#sweep(now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return OK;
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond)) };
  }

  /** Forgets every key. */
  clear(): void {
    this.#buckets.clear();
  }

  /**
   * Drops idle buckets from the least recently used end, stopping at the first recent
   * one (everything after it is more recent), then the oldest ones past `maxKeys`.
   * Each bucket is dropped at most once, so the cost is O(1) amortised per take.
   */
  #sweep(now: number): void {
    this.#untilSweep = SWEEP_EVERY;
    const buckets = this.#buckets;
    for (const [key, bucket] of buckets) {
      if (now - bucket.at < this.#fullAfterMs && buckets.size <= this.#maxKeys) break;
      buckets.delete(key);
    }
  }
}

/**
 * At most `max` operations in flight per key (e.g. concurrent tool calls per token).
 * Keys with nothing in flight are forgotten past {@link IDLE_KEYS_KEPT} of them, so memory
 * follows the load.
 *
 * @example
 * const release = calls.acquire(tokenKey);
 * if (release === undefined) return reply(429);
 * try { await handle() } finally { release() }
 */
export class ConcurrencyLimiter {
  readonly max: number;
  readonly #inFlight = new Map<string, number>();
  /** Keys with something in flight (the map also keeps some idle ones). */
  #busy = 0;

  constructor(max: number) {
    if (!(max >= 1) || !Number.isFinite(max)) {
      throw new McplexError("INVALID_ARGUMENT", `concurrency limit must be at least 1, got ${max}`);
    }
    this.max = Math.floor(max);
  }

  /** Operations in flight for `key`. */
  count(key: string): number {
    return this.#inFlight.get(key) ?? 0;
  }

  /** How many keys have something in flight. */
  get size(): number {
    return this.#busy;
  }

  /**
   * Claims a slot for `key`: returns its release function, or `undefined` when `key`
   * is at the limit. Calling a release more than once releases once.
   */
  acquire(key: string): (() => void) | undefined {
    const count = this.#inFlight.get(key) ?? 0;
    if (count >= this.max) return undefined;
    this.#inFlight.set(key, count + 1);
    if (count === 0) this.#busy++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#inFlight.get(key) ?? 1) - 1;
      if (left > 0) {
        this.#inFlight.set(key, left);
        return;
      }
      this.#busy--;
      // A key dropped and added again on every request (one client, one call at a time)
      // would shrink and grow the map's table each time: a few idle keys stay.
      if (this.#inFlight.size > IDLE_KEYS_KEPT) this.#inFlight.delete(key);
      else this.#inFlight.set(key, 0);
    };
  }
}

/** Keys with nothing in flight a {@link ConcurrencyLimiter} keeps rather than forgets. */
const IDLE_KEYS_KEPT = 64;
