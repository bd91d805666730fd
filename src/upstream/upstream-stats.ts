/** A snapshot of one server's request statistics. */
export interface UpstreamStatsSnapshot {
  requests: number;
  errors: number;
  /** Calls slower than the slow-call threshold. */
  slow: number;
  inFlight: number;
  /** Latency quantiles in ms, estimated from a log-scale histogram (within ~10%). */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

// Log-scale buckets: each bucket is ~9% wider than the previous, from 10 µs up.
const BASE_MS = 0.01;
const GROWTH = 1.09;
const LOG_GROWTH = Math.log(GROWTH);
const BUCKETS = 220; // up to ~ 0.01 ms * 1.09^220 ≈ 1.7e6 ms

/**
 * Request counters and a fixed-size latency histogram: O(1) per request, no
 * allocation, so it can sit on the hot path of every call.
 */
export class UpstreamStats {
  readonly slowMs: number;
  #requests = 0;
  #errors = 0;
  #slow = 0;
  #inFlight = 0;
  #sum = 0;
  #max = 0;
  readonly #histogram = new Uint32Array(BUCKETS);

  constructor(slowMs = 5000) {
    this.slowMs = slowMs;
  }

  /** Marks a request as started; returns its start time for {@link end}. */
  begin(): number {
    this.#inFlight++;
    return performance.now();
  }

  /** Records a finished request; returns its duration in ms (slow from {@link slowMs} on). */
  end(startedAt: number, failed: boolean): number {
    const ms = performance.now() - startedAt;
    this.#inFlight--;
    this.#requests++;
    if (failed) this.#errors++;
    this.#sum += ms;
    if (ms > this.#max) this.#max = ms;
    const bucket = ms <= BASE_MS ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(ms / BASE_MS) / LOG_GROWTH));
    this.#histogram[bucket]!++;
    if (ms >= this.slowMs) this.#slow++;
    return ms;
  }

  snapshot(): UpstreamStatsSnapshot {
    return {
      requests: this.#requests,
      errors: this.#errors,
      slow: this.#slow,
      inFlight: this.#inFlight,
      p50: this.#quantile(0.5),
      p95: this.#quantile(0.95),
      p99: this.#quantile(0.99),
      max: round(this.#max),
      mean: this.#requests === 0 ? 0 : round(this.#sum / this.#requests),
    };
  }

  #quantile(q: number): number {
    if (this.#requests === 0) return 0;
    const target = Math.ceil(q * this.#requests);
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.#histogram[i]!;
      if (seen >= target) return round(Math.min(this.#max, BASE_MS * GROWTH ** i));
    }
    return round(this.#max);
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
