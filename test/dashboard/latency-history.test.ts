import { describe, expect, it } from "vitest";
import { LatencyHistory } from "../../src/dashboard/latency-history.js";

// The per-server latency ring behind the dashboard's chart: buckets by time, a window that
// slides, and memory that stays bounded whatever the call rate.

const MINUTE = 60_000;
const T0 = 1_700_000_000_000 - (1_700_000_000_000 % MINUTE);

describe("latency history", () => {
  it("puts calls in per-minute buckets per server, with their percentiles and max", () => {
    const history = new LatencyHistory();
    for (const ms of [10, 20, 30, 40, 100]) history.record("a", ms, T0 + 5_000);
    history.record("a", 7, T0 + MINUTE + 1);
    history.record("b", 3, T0 + 2);
    const { bucketMs, windowMs, servers } = history.snapshot(T0 + MINUTE + 10);
    expect({ bucketMs, windowMs }).toEqual({ bucketMs: MINUTE, windowMs: 15 * MINUTE });
    expect(servers.a).toEqual([
      { at: T0, calls: 5, p50: 30, p95: 100, max: 100 },
      { at: T0 + MINUTE, calls: 1, p50: 7, p95: 7, max: 7 },
    ]);
    expect(servers.b).toEqual([{ at: T0, calls: 1, p50: 3, p95: 3, max: 3 }]);
  });

  it("drops buckets older than the window, and reuses their slots", () => {
    const history = new LatencyHistory({ buckets: 3 });
    history.record("a", 1, T0);
    history.record("a", 2, T0 + MINUTE);
    expect(history.snapshot(T0 + 2 * MINUTE).servers.a?.map((p) => p.max)).toEqual([1, 2]);
    // Three minutes on, the first minute is out of the window...
    expect(history.snapshot(T0 + 3 * MINUTE).servers.a?.map((p) => p.max)).toEqual([2]);
    // ...and a call then takes its slot, starting a new bucket.
    history.record("a", 9, T0 + 3 * MINUTE);
    expect(history.snapshot(T0 + 3 * MINUTE).servers.a).toEqual([
      { at: T0 + MINUTE, calls: 1, p50: 2, p95: 2, max: 2 },
      { at: T0 + 3 * MINUTE, calls: 1, p50: 9, p95: 9, max: 9 },
    ]);
  });

  it("counts every call and keeps the max, with percentiles from a bounded sample", () => {
    const history = new LatencyHistory({ samplesPerBucket: 16 });
    for (let i = 1; i <= 10_000; i++) history.record("a", i % 100, T0 + 1);
    history.record("a", 5_000, T0 + 2);
    const [bucket] = history.snapshot(T0 + 3).servers.a ?? [];
    expect(bucket?.calls).toBe(10_001);
    expect(bucket?.max).toBe(5_000);
    // A sample of 16 of 10 001 durations spread over 0..99 (and one 5 000).
    expect(bucket?.p50).toBeGreaterThanOrEqual(0);
    expect(bucket?.p50).toBeLessThan(100);
  });

  it("shows only the servers asked for (those of the caller's profile)", () => {
    const history = new LatencyHistory();
    history.record("a", 1, T0);
    history.record("b", 2, T0);
    expect(Object.keys(history.snapshot(T0, ["b", "c"]).servers)).toEqual(["b"]);
    expect(Object.keys(history.snapshot(T0).servers)).toEqual(["a", "b"]);
  });
});
