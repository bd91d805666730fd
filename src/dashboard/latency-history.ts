/** One time bucket of one server's calls, as the page draws it. */
export interface LatencyPoint {
  /** Start of the bucket, epoch ms. */
  at: number;
  calls: number;
  p50: number;
  p95: number;
  max: number;
}

/** The history the page reads: a series of non-empty buckets per server, oldest first. */
export interface LatencySnapshot {
  bucketMs: number;
  windowMs: number;
  servers: Record<string, LatencyPoint[]>;
}

interface Bucket {
  at: number;
  calls: number;
  max: number;
  /** A uniform sample of the bucket's durations, at most `samplesPerBucket` of them. */
  samples: number[];
}

/** Options of {@link LatencyHistory}. */
export interface LatencyHistoryOptions {
  /** Width of a bucket, ms. Default one minute. */
  bucketMs?: number;
  /** Buckets kept per server (the ring's size). Default 15: the last quarter hour. */
  buckets?: number;
  /** Durations kept per bucket for its percentiles (a reservoir sample beyond it). Default 256. */
  samplesPerBucket?: number;
}

/**
 * Call durations per server over the last minutes, for the dashboard's latency chart: per
 * server a ring of time buckets, each holding a bounded sample of durations, so memory stays
 * fixed whatever the call rate (servers × buckets × samples).
 */
export class LatencyHistory {
  readonly #bucketMs: number;
  readonly #size: number;
  readonly #cap: number;
  /** Per server, a ring indexed by bucket number modulo the size. */
  readonly #rings = new Map<string, Array<Bucket | undefined>>();

  constructor(options: LatencyHistoryOptions = {}) {
    this.#bucketMs = options.bucketMs ?? 60_000;
    this.#size = options.buckets ?? 15;
    this.#cap = options.samplesPerBucket ?? 256;
  }

  /** Counts one call of `server` that took `ms` and ended at `endedAt` (epoch ms). */
  record(server: string, ms: number, endedAt = Date.now()): void {
    let ring = this.#rings.get(server);
    if (ring === undefined) {
      ring = new Array(this.#size).fill(undefined);
      this.#rings.set(server, ring);
    }
    const n = Math.floor(endedAt / this.#bucketMs);
    const at = n * this.#bucketMs;
    const slot = n % this.#size;
    let bucket = ring[slot];
    if (bucket === undefined || bucket.at !== at) {
      bucket = { at, calls: 0, max: 0, samples: [] };
      ring[slot] = bucket;
    }
    bucket.calls++;
    bucket.max = Math.max(bucket.max, ms);
    if (bucket.samples.length < this.#cap) bucket.samples.push(ms);
    else {
      // Reservoir sampling: every call of the bucket has the same chance to be kept.
      const keep = Math.floor(Math.random() * bucket.calls);
      if (keep < this.#cap) bucket.samples[keep] = ms;
    }
  }

  /** The buckets of the window ending at `now`, per server (only `servers` when given). */
  snapshot(now = Date.now(), servers?: readonly string[]): LatencySnapshot {
    const windowMs = this.#bucketMs * this.#size;
    const oldest = (Math.floor(now / this.#bucketMs) - this.#size + 1) * this.#bucketMs;
    const out: Record<string, LatencyPoint[]> = {};
    for (const name of servers ?? this.#rings.keys()) {
      const ring = this.#rings.get(name);
      if (ring === undefined) continue;
      out[name] = ring
        .filter((b): b is Bucket => b !== undefined && b.at >= oldest && b.at <= now)
        .sort((a, b) => a.at - b.at)
        .map((b) => {
          const sorted = [...b.samples].sort((x, y) => x - y);
          return {
            at: b.at,
            calls: b.calls,
            p50: percentile(sorted, 0.5),
            p95: percentile(sorted, 0.95),
            max: b.max,
          };
        });
    }
    return { bucketMs: this.#bucketMs, windowMs, servers: out };
  }
}

/** The nearest-rank percentile of ascending `sorted` (not empty). */
function percentile(sorted: readonly number[], q: number): number {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return Math.round(sorted[rank - 1]! * 10) / 10;
}
