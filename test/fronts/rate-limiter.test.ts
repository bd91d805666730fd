import { describe, expect, it } from "vitest";
import { ConcurrencyLimiter, RateLimiter } from "../../src/fronts/rate-limiter.js";

/** Takes `n` times at `now`; returns how many were allowed. */
function takeMany(limiter: RateLimiter, key: string, n: number, now: number): number {
  let allowed = 0;
  for (let i = 0; i < n; i++) if (limiter.take(key, now).ok) allowed++;
  return allowed;
}

describe("RateLimiter", () => {
  it("allows a burst, then refuses with the seconds until the next token", () => {
    const limiter = new RateLimiter({ ratePerSecond: 2, burst: 5 });
    expect(takeMany(limiter, "a", 5, 0)).toBe(5);
    expect(limiter.take("a", 0)).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it("refills at the configured rate", () => {
    const limiter = new RateLimiter({ ratePerSecond: 10, burst: 1 });
    expect(limiter.take("a", 1000).ok).toBe(true);
    expect(limiter.take("a", 1050).ok).toBe(false);
    expect(limiter.take("a", 1100).ok).toBe(true);
    expect(limiter.take("a", 1100).ok).toBe(false);
    // Refusals cost nothing: the token that arrives after 100 ms is there.
    expect(limiter.take("a", 1200).ok).toBe(true);
  });

  it("never holds more than the burst after a long idle time", () => {
    const limiter = new RateLimiter({ ratePerSecond: 100, burst: 3 });
    expect(takeMany(limiter, "a", 3, 0)).toBe(3);
    expect(takeMany(limiter, "a", 10, 3_600_000)).toBe(3);
  });

  it("rounds Retry-After up to whole seconds for slow rates", () => {
    const limiter = new RateLimiter({ ratePerSecond: 0.5 });
    expect(limiter.burst).toBe(1);
    expect(limiter.take("a", 0).ok).toBe(true);
    expect(limiter.take("a", 0)).toEqual({ ok: false, retryAfterSeconds: 2 });
    expect(limiter.take("a", 1500)).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(limiter.take("a", 2000).ok).toBe(true);
  });

  it("defaults the burst to the rate", () => {
    expect(new RateLimiter({ ratePerSecond: 20 }).burst).toBe(20);
  });

  it("keeps keys apart", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 1 });
    expect(limiter.take("token#0", 0).ok).toBe(true);
    expect(limiter.take("token#0", 0).ok).toBe(false);
    expect(limiter.take("token#1", 0).ok).toBe(true);
    expect(limiter.take("127.0.0.1", 0).ok).toBe(true);
  });

  it("survives a clock going backwards without refilling or draining", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 2 });
    expect(takeMany(limiter, "a", 2, 10_000)).toBe(2);
    expect(limiter.take("a", 5_000).ok).toBe(false);
    expect(limiter.take("a", 6_000).ok).toBe(true);
  });

  it("drops fully refilled buckets once it grows past its bound", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 2, maxKeys: 10 });
    for (let i = 0; i < 10; i++) limiter.take(`k${i}`, 0);
    expect(limiter.size).toBe(10);
    // 2 s later every bucket is full again: forgetting them changes nothing.
    limiter.take("new", 2000);
    expect(limiter.size).toBe(1);
  });

  it("drops the least recently used key past the bound when every bucket is busy", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 1, maxKeys: 3 });
    limiter.take("a", 0);
    limiter.take("b", 0);
    limiter.take("c", 0);
    expect(limiter.take("a", 100).ok).toBe(false); // a is now the most recently used
    limiter.take("d", 100);
    expect(limiter.size).toBe(3);
    expect(limiter.take("a", 100).ok).toBe(false); // still tracked
    expect(limiter.take("b", 100).ok).toBe(true); // forgotten, so it starts afresh
  });

  it("sweeps idle keys now and then even below its bound", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 1 });
    for (let i = 0; i < 50; i++) limiter.take(`idle${i}`, 0);
    expect(limiter.size).toBe(50);
    takeMany(limiter, "busy", 2048, 60_000);
    expect(limiter.size).toBe(1);
  });

  it("forgets everything on clear()", () => {
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 1 });
    limiter.take("a", 0);
    limiter.clear();
    expect(limiter.size).toBe(0);
    expect(limiter.take("a", 0).ok).toBe(true);
  });

  it("rejects rates and bursts that make no sense", () => {
    expect(() => new RateLimiter({ ratePerSecond: 0 })).toThrow(/positive/);
    expect(() => new RateLimiter({ ratePerSecond: -1 })).toThrow(/positive/);
    expect(() => new RateLimiter({ ratePerSecond: Number.NaN })).toThrow(/positive/);
    expect(() => new RateLimiter({ ratePerSecond: Number.POSITIVE_INFINITY })).toThrow(/positive/);
    expect(() => new RateLimiter({ ratePerSecond: 1, burst: 0.5 })).toThrow(/burst/);
  });
});

describe("ConcurrencyLimiter", () => {
  it("hands out slots up to the limit and refuses the next", () => {
    const limiter = new ConcurrencyLimiter(2);
    const first = limiter.acquire("a");
    const second = limiter.acquire("a");
    expect(first).toBeTypeOf("function");
    expect(second).toBeTypeOf("function");
    expect(limiter.acquire("a")).toBeUndefined();
    expect(limiter.count("a")).toBe(2);
  });

  it("frees a slot on release, once however often release is called", () => {
    const limiter = new ConcurrencyLimiter(2);
    const first = limiter.acquire("a")!;
    limiter.acquire("a");
    first();
    first();
    expect(limiter.count("a")).toBe(1);
    expect(limiter.acquire("a")).toBeTypeOf("function");
    expect(limiter.acquire("a")).toBeUndefined();
  });

  it("keeps keys apart and forgets keys with nothing in flight", () => {
    const limiter = new ConcurrencyLimiter(1);
    const a = limiter.acquire("a")!;
    const b = limiter.acquire("b")!;
    expect(limiter.acquire("a")).toBeUndefined();
    expect(limiter.size).toBe(2);
    a();
    b();
    expect(limiter.size).toBe(0);
    expect(limiter.count("a")).toBe(0);
  });

  it("rejects a limit below one", () => {
    expect(() => new ConcurrencyLimiter(0)).toThrow(/at least 1/);
    expect(() => new ConcurrencyLimiter(Number.NaN)).toThrow(/at least 1/);
  });
});
