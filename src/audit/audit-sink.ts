/**
 * Where the audit trail's lines go: appended in the order given, each whole (a line is never
 * split or interleaved with another), written off the call path. Two implementations: a file with
 * rotation (`RotatingFile`) and a stream such as stderr (`StreamSink`).
 *
 * The bound: lines wait in memory while the disk (or the pipe) is slow. Past `backlogBytes` of
 * them, or while writing fails, a new call waits for room, at most `waitMs`, and is then refused
 * (`AUDIT_BEHIND`) without being run: an audit trail that silently drops lines is worse than a
 * call refused. So every call is answered: run, or refused within `waitMs` of asking for room. A call that
 * has run always gets its line queued, so no line of a call that ran is ever dropped while the
 * process lives; the backlog may pass its bound by the lines of the calls in flight.
 */
export interface AuditSink {
  /** Queues one line (with its newline). Never blocks and never throws: failures are reported. */
  write(line: string): void;
  /**
   * `undefined` when a line may be queued now (the hot path: no promise); else a promise that
   * resolves once the backlog is under its bound (and writing works) again, or rejects with an
   * `AUDIT_BEHIND` error after `waitMs` (at once when the sink cannot write at all), or when
   * `signal` aborts.
   */
  room(signal: AbortSignal): Promise<void> | undefined;
  /** Writes every queued line, then stops. Safe to call twice. */
  close(): Promise<void>;
}

/** What a sink reports while it writes: for a warning on the terminal (only `src/cli/` prints). */
export type AuditSinkEvent =
  /** A write failed; lines are kept and written again every second until it works. */
  | { type: "audit-write-failed"; to: string; error: string; pendingBytes: number }
  /** Writing works again after a failure. */
  | { type: "audit-write-resumed"; to: string }
  /** Calls refused because their lines could not be written in time (first one of a run, then each 100th). */
  | { type: "audit-calls-refused"; to: string; count: number }
  /**
   * A rotation dropped a file whose newest line was younger than `keepForMs`: lines come faster
   * than `keep` files of `maxSize` hold for that long (a flood, or too small a trail). `lines` is
   * how many the dropped file held; `newestAgeMs` how old its newest line was.
   */
  | {
      type: "audit-recent-lines-dropped";
      to: string;
      file: string;
      lines: number;
      newestAgeMs: number;
      keepForMs: number;
    }
  /** Lines that could not be written before the sink closed (the write kept failing). */
  | { type: "audit-lines-lost"; to: string; count: number; error: string };

/** How a sink bounds what waits in memory. */
export interface AuditBacklog {
  /** Bytes of lines waiting to be written past which new calls wait for room. Default 8 MiB. */
  backlogBytes?: number;
  /** How long a call waits for room before it is refused (ms). Default 5 s. */
  waitMs?: number;
  /** Receives what goes wrong (and right again). */
  onEvent?: (event: AuditSinkEvent) => void;
}

/** Default of {@link AuditBacklog.backlogBytes}. */
export const DEFAULT_BACKLOG_BYTES = 8 * 1024 * 1024;
/** Default of {@link AuditBacklog.waitMs}: long enough for a disk hiccup, short for a client. */
export const DEFAULT_WAIT_MS = 5000;
