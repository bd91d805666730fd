import { createHash } from "node:crypto";
import { MemoryQuotaStore, type QuotaStore, type WindowTake } from "../access/quotas.js";
import type { RedisLink } from "./redis-link.js";

/**
 * A window's count in one hash (`index`, `count`), moved to the current window and counted in
 * one atomic script, by Redis's clock (TIME), so replicas whose clocks differ agree on windows.
 */
const TAKE = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local index = math.floor(now / window)
local held = redis.call('HMGET', KEYS[1], 'index', 'count')
local count = 0
if tonumber(held[1]) == index then count = tonumber(held[2]) or 0 end
if count >= limit then return {0, (index + 1) * window} end
redis.call('HSET', KEYS[1], 'index', tostring(index), 'count', tostring(count + 1))
redis.call('PEXPIRE', KEYS[1], window + 1000)
return {1, 0}
`;

/**
 * Running calls as members of a sorted set scored by when their lease ends: those of a replica
 * that died mid-call leave by themselves once their lease is over.
 */
const ENTER = `
local limit = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

/** How long a running call holds its place if its replica never says it ended. */
const LEASE_MS = 10 * 60_000;

/**
 * `quotas:` counted in Redis, shared by every replica of a cluster. While Redis is down, counts
 * go on in this replica's memory (each replica then allows the quota on its own: leniency for
 * the outage, not a refusal of every call).
 */
export class RedisQuotaStore implements QuotaStore {
  readonly #link: RedisLink;
  readonly #local = new MemoryQuotaStore();
  /** Calls counted locally (Redis was down when they entered): they leave locally too. */
  readonly #enteredLocally = new Set<string>();

  constructor(link: RedisLink) {
    this.#link = link;
  }

  take(key: string, limit: number, windowMs: number): WindowTake | Promise<WindowTake> {
    if (!this.#link.up) return this.#local.take(key, limit, windowMs);
    return this.#link.client
      .eval(TAKE, { keys: [redisKey(key)], arguments: [String(limit), String(windowMs)] })
      .then(
        (reply): WindowTake => {
          const [ok, retryAt] = reply as [number, number];
          return ok === 1 ? { ok: true } : { ok: false, retryAt };
        },
        () => this.#local.take(key, limit, windowMs),
      );
  }

  enter(key: string, id: string, limit: number): boolean | Promise<boolean> {
    const local = () => {
      const entered = this.#local.enter(key, id, limit);
      if (entered) this.#enteredLocally.add(id);
      return entered;
    };
    if (!this.#link.up) return local();
    return this.#link.client
      .eval(ENTER, { keys: [redisKey(key)], arguments: [String(limit), String(LEASE_MS), id] })
      .then((reply) => reply === 1, local);
  }

  leave(key: string, id: string): void {
    if (this.#enteredLocally.delete(id)) {
      this.#local.leave(key, id);
      return;
    }
    // Not awaited: a lost ZREM leaves the place taken until its lease ends.
    void this.#link.client.zRem(redisKey(key), id).catch(() => {});
  }
}

/** Keys name a quota and a caller's key: hashed, so Redis holds no address or principal. */
function redisKey(key: string): string {
  return `mcplex:quota:${createHash("sha256").update(key).digest("base64url")}`;
}
