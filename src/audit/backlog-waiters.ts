import { AbortedError, McplexError } from "../errors.js";
import type { AuditSinkEvent } from "./audit-sink.js";

/** Refusals are reported on the first of a run, then on every this many. */
const REPORT_EVERY = 100;

/**
 * The calls waiting for room in a sink's backlog, and the refusals when none comes in time: the
 * one place both sinks bound what waits, so they refuse alike (see `AuditSink.room`).
 */
export class BacklogWaiters {
  readonly #waiters = new Set<() => void>();
  readonly #to: string;
  readonly #waitMs: number;
  readonly #onEvent: ((event: AuditSinkEvent) => void) | undefined;
  /** Calls refused since the backlog last had room. */
  #refused = 0;

  constructor(to: string, waitMs: number, onEvent: ((event: AuditSinkEvent) => void) | undefined) {
    this.#to = to;
    this.#waitMs = waitMs;
    this.#onEvent = onEvent;
  }

  /**
   * Resolves on the next {@link wake}; rejects with {@link refusal} at `deadline` (a
   * `performance.now()` time; `waitMs` from now by default), or with an `AbortedError` when
   * `signal` aborts first (the client went: nothing to refuse).
   */
  wait(signal: AbortSignal, behind: () => string, deadline = this.deadline()): Promise<void> {
    return new Promise((resolve, reject) => {
      // A timer, not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: Node holds a timeout
      // signal only weakly, so a full collection of the heap while the call waited took its
      // deadline with it and the call waited for ever. The timer list holds this one.
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiters.delete(done);
      };
      const done = () => {
        settle();
        resolve();
      };
      const onAbort = () => {
        settle();
        reject(
          signal.aborted
            ? new AbortedError("the call was cancelled while it waited for the audit trail")
            : this.refusal(behind()),
        );
      };
      const timer = setTimeout(onAbort, Math.max(0, deadline - performance.now()));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(done);
    });
  }

  /** When a call that starts waiting now is refused: `waitMs` from now. */
  deadline(): number {
    return performance.now() + this.#waitMs;
  }

  /** Lets every waiting call go: the backlog has room again. */
  wake(): void {
    this.#refused = 0;
    for (const done of [...this.#waiters]) done();
  }

  /** The error a call is refused with, counted and reported (`behind` says what holds it up). */
  refusal(behind: string): McplexError {
    this.#refused++;
    if (this.#refused === 1 || this.#refused % REPORT_EVERY === 0)
      this.#onEvent?.({ type: "audit-calls-refused", to: this.#to, count: this.#refused });
    return new McplexError(
      "AUDIT_BEHIND",
      `the call was not run: its audit line cannot be written (${behind}), and no call runs unaudited`,
      {
        retryable: true,
        hint: `check where the audit trail goes (${this.#to}): a full, slow or unwritable disk, or a closed stream`,
      },
    );
  }
}
