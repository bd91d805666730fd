/** The longest delay a Node timer keeps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A signal that aborts when any of some signals does, or at a deadline: see {@link deadlineSignal}. */
export interface Deadline {
  /**
   * Aborts with the reason of the first of the signals that aborts, or, `ms` after the deadline
   * was made, with a `TimeoutError` DOMException (as `AbortSignal.timeout`'s).
   */
  readonly signal: AbortSignal;
  /** Whether {@link signal} aborted because the time ran out (not because one of the signals did). */
  readonly expired: boolean;
  /** Stops the timer: call it when the work ends, so that no timer outlives it. Safe to call twice. */
  clear(): void;
}

/**
 * `signals`, or after `ms`, as one signal: `AbortSignal.any([...signals, AbortSignal.timeout(ms)])`
 * that fires. Node holds a timeout signal only while it has `abort` listeners of its own, and
 * `AbortSignal.any` watches its sources only weakly, so after a full collection of the heap the
 * combined signal of that pattern never aborts at `ms` (the work it bounds waits for ever). Here
 * the deadline is a timer, which the event loop holds with the controller it aborts; it is
 * unreferenced, as `AbortSignal.timeout`'s, so it keeps no process alive.
 *
 * @example
 * const deadline = deadlineSignal(5_000, request.signal);
 * try {
 *   return await fetch(url, { signal: deadline.signal });
 * } finally {
 *   deadline.clear();
 * }
 */
export function deadlineSignal(ms: number, ...signals: Array<AbortSignal | undefined>): Deadline {
  const time = new AbortController();
  const sources = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  const signal = sources.length === 0 ? time.signal : AbortSignal.any([...sources, time.signal]);
  // The reason `AbortSignal.timeout` gives: callers read its name (`TimeoutError`).
  const timer = signal.aborted
    ? undefined
    : setTimeout(
        () => time.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
        // Node fires a longer timer after 1 ms: the longest it keeps (about 24.8 days) instead.
        Math.min(ms, MAX_TIMER_MS),
      );
  timer?.unref();
  return {
    signal,
    get expired() {
      return time.signal.aborted && signal.reason === time.signal.reason;
    },
    clear: () => clearTimeout(timer),
  };
}
