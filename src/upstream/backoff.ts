/** Reconnect timing: exponential backoff with jitter, capped, reset after a healthy period. */
export interface BackoffOptions {
  /** Failures in a row after which the breaker opens: the next delay is `breakerOpenFor`. Default 8. */
  breakerFailures?: number;
  /** The delay while the breaker is open, in ms. Default 300 000 (5 minutes). */
  breakerOpenFor?: number;
  /** First delay in ms. Default 1000. */
  initial?: number;
  /** Largest delay in ms. Default 30 000. */
  max?: number;
  /** Connected this long (ms) counts as healthy and resets the delay. Default 60 000. */
  healthyAfter?: number;
  /** Source of randomness in [0, 1), for tests. */
  random?: () => number;
}

/**
 * Delays of 1 s, 2 s, 4 s ... up to 30 s, each with "equal jitter" (half fixed,
 * half random), so that many hubs restarting at once do not reconnect in step.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #healthyAfter: number;
  readonly #random: () => number;
  readonly #breakerFailures: number;
  readonly #breakerOpenFor: number;
  #attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initial ?? 1000;
    this.#max = options.max ?? 30_000;
    this.#healthyAfter = options.healthyAfter ?? 60_000;
    this.#random = options.random ?? Math.random;
    this.#breakerFailures = options.breakerFailures ?? 8;
    this.#breakerOpenFor = options.breakerOpenFor ?? 5 * 60_000;
  }

  /** Consecutive failures so far. */
  get attempt(): number {
    return this.#attempt;
  }

  /** The delay before the next attempt, in ms; advances the sequence. */
  next(): number {
    const base = Math.min(this.#max, this.#initial * 2 ** this.#attempt);
    this.#attempt++;
    return Math.round(base / 2 + (base / 2) * this.#random());
  }

  /**
   * Counts a failure and gives the delay before the next attempt: the breaker's when this
   * failure is the `breakerFailures`th in a row (or later), the backoff's otherwise.
   */
  failed(): { delay: number; breakerOpen: boolean } {
    const backoff = this.next();
    if (this.#attempt < this.#breakerFailures) return { delay: backoff, breakerOpen: false };
    return { delay: this.#breakerOpenFor, breakerOpen: true };
  }

  /**
   * Called when a connection ends: resets the sequence if it had lasted long
   * enough to count as healthy.
   */
  connectionEnded(connectedForMs: number): void {
    if (connectedForMs >= this.#healthyAfter) this.#attempt = 0;
  }

  reset(): void {
    this.#attempt = 0;
  }
}
