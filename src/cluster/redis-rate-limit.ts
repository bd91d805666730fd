import { createHash } from "node:crypto";
import type { SharedRateLimit } from "../fronts/cluster-link.js";
import type { RateDecision } from "../fronts/rate-limiter.js";
import type { RedisLink } from "./redis-link.js";

/**
 * The token bucket of src/gateway/rate-limiter.ts, kept in Redis and updated in one atomic
 * script, so every replica takes from the same bucket. Redis's clock (TIME) refills it: the
 * replicas' clocks need not agree. A bucket left alone expires once it would be full again.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local ok = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate) + 1000)
if ok == 1 then return {1, 0} end
return {0, math.ceil((1 - tokens) / rate)}
`;

/** Rate limits per token shared by every replica through Redis (see {@link SharedRateLimit}). */
export class RedisRateLimit implements SharedRateLimit {
  readonly #link: RedisLink;

  constructor(link: RedisLink) {
    this.#link = link;
  }

  take(key: string, perSecond: number, burst: number): Promise<RateDecision | undefined> | undefined {
    if (!this.#link.up) return undefined;
    // Keys are token#<n> or client addresses: hashed, so Redis holds no address.
    const bucket = `mcplex:rate:${createHash("sha256").update(`${perSecond}/${burst}/${key}`).digest("base64url")}`;
    return this.#link.client
      .eval(TAKE, { keys: [bucket], arguments: [String(perSecond / 1000), String(burst)] })
      .then(
        (reply): RateDecision => {
          const [ok, waitMs] = reply as [number, number];
          return ok === 1
            ? { ok: true }
            : { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
        },
        () => undefined,
      );
  }
}
