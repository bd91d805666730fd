import type { Writable } from "node:stream";
import { type AuditBacklog, type AuditSink, DEFAULT_BACKLOG_BYTES, DEFAULT_WAIT_MS } from "./audit-sink.js";
import { BacklogWaiters } from "./backlog-waiters.js";

/**
 * Audit lines on a stream the process does not own, such as its stderr (`audit.to: stderr`,
 * `--audit -`): one `write` per line, the stream's own buffer as the backlog (bounded as
 * `AuditSink` says), and never closed. A stream that fails (its reader went away) refuses every
 * call from then on: there is nowhere left to audit them.
 */
export class StreamSink implements AuditSink {
  readonly #stream: Writable;
  readonly #name: string;
  readonly #backlogBytes: number;
  readonly #waiters: BacklogWaiters;
  #broken: string | undefined;
  readonly #onDrain = () => this.#waiters.wake();
  readonly #onError: (error: Error) => void;

  /** `name` says where the lines go in errors and events (`stderr`). */
  constructor(stream: Writable, name: string, options: AuditBacklog = {}) {
    this.#stream = stream;
    this.#name = name;
    this.#backlogBytes = options.backlogBytes ?? DEFAULT_BACKLOG_BYTES;
    this.#waiters = new BacklogWaiters(name, options.waitMs ?? DEFAULT_WAIT_MS, options.onEvent);
    this.#onError = (error) => {
      if (this.#broken !== undefined) return;
      this.#broken = error.message;
      options.onEvent?.({ type: "audit-write-failed", to: name, error: error.message, pendingBytes: 0 });
      // Calls waiting for room get their refusal now, not after waitMs.
      this.#waiters.wake();
    };
    stream.on("drain", this.#onDrain);
    stream.on("error", this.#onError);
  }

  write(line: string): void {
    if (this.#broken === undefined) this.#stream.write(line);
  }

  room(signal: AbortSignal): Promise<void> | undefined {
    return this.#room(signal, undefined);
  }

  /** Waits again after a wake that left no room, until the one deadline of the call's first wait. */
  #room(signal: AbortSignal, deadline: number | undefined): Promise<void> | undefined {
    if (this.#broken !== undefined)
      return Promise.reject(this.#waiters.refusal(`${this.#name} failed: ${this.#broken}`));
    if (this.#stream.writableLength <= this.#backlogBytes) return undefined;
    const until = deadline ?? this.#waiters.deadline();
    return this.#waiters
      .wait(signal, () => `${this.#stream.writableLength} bytes wait to be written to ${this.#name}`, until)
      .then(() => this.#room(signal, until));
  }

  /** Waits until the stream has taken every line (at most `waitMs`); the stream stays open. */
  async close(): Promise<void> {
    if (this.#broken === undefined && this.#stream.writableLength > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, DEFAULT_WAIT_MS).unref();
        this.#stream.once("drain", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.#stream.off("drain", this.#onDrain);
    this.#stream.off("error", this.#onError);
  }
}
