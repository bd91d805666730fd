import type { Writable } from "node:stream";

/** Messages up to this size are always taken, so that small calls and control messages pass bulk. */
const SMALL_MESSAGE = 64 * 1024;

/** Default bytes that may wait for one server to read. */
export const DEFAULT_MAX_QUEUED_BYTES = 32 * 1024 * 1024;

/**
 * Whether a message of `size` may join `backlog` bytes waiting under `limit`: small ones
 * always, a message alone always (however large), others while they fit.
 */
export function fitsQueue(backlog: number, size: number, limit: number): boolean {
  return size <= SMALL_MESSAGE || backlog === 0 || backlog + size <= limit;
}

/** Options of {@link WriteQueue}. */
export interface WriteQueueOptions {
  /**
   * Bytes (UTF-16 units of the serialised text) that may wait for the stream beyond what
   * it has taken; past that a large message is refused. Default 32 MiB.
   */
  maxQueuedBytes?: number;
}

/**
 * Newline-delimited messages to a stream that reads at its own pace: written as fast as
 * the stream takes them and no faster (each `write` that returns false waits for
 * `drain`), and held as one string each meanwhile, so memory stays a small multiple of
 * what waits. Small messages of one tick go out as one write (with many messages in
 * flight, the largest single saving on a stdio path). Order is kept.
 *
 * @example
 * const queue = new WriteQueue(child.stdin);
 * if (!queue.push(JSON.stringify(message))) throw new Error("queue full");
 */
export class WriteQueue {
  readonly #stream: Writable;
  readonly #max: number;
  readonly #items: string[] = [];
  #queued = 0;
  #scheduled = false;
  #blocked = false;

  constructor(stream: Writable, options: WriteQueueOptions = {}) {
    this.#stream = stream;
    this.#max = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
  }

  /** What waits: queued here plus what the stream holds but has not yet written. */
  get backlog(): number {
    return this.#queued + this.#stream.writableLength;
  }

  /** The limit given at construction. */
  get limit(): number {
    return this.#max;
  }

  /**
   * Queues one message (without its newline). Returns false, queuing nothing, when it is
   * large and would take the backlog past the limit; a message alone is always taken.
   */
  push(text: string): boolean {
    if (!fitsQueue(this.backlog, text.length, this.#max)) return false;
    this.#items.push(text);
    this.#queued += text.length + 1;
    if (!this.#scheduled && !this.#blocked) {
      this.#scheduled = true;
      process.nextTick(this.#flush);
    }
    return true;
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const stream = this.#stream;
    while (this.#items.length > 0 && !this.#blocked) {
      if (stream.destroyed || stream.writableEnded) {
        this.#items.length = 0;
        this.#queued = 0;
        return;
      }
      let ok: boolean;
      const first = this.#items.shift()!;
      if (first.length > SMALL_MESSAGE) {
        // Apart from its newline: joining them would copy the whole message once more.
        this.#queued -= first.length + 1;
        stream.write(first);
        ok = stream.write("\n");
      } else {
        let batch = `${first}\n`;
        while (
          this.#items.length > 0 &&
          this.#items[0]!.length <= SMALL_MESSAGE &&
          batch.length < SMALL_MESSAGE
        )
          batch += `${this.#items.shift()!}\n`;
        this.#queued -= batch.length;
        ok = stream.write(batch);
      }
      if (!ok) {
        this.#blocked = true;
        stream.once("drain", () => {
          this.#blocked = false;
          this.#flush();
        });
      }
    }
  };
}
