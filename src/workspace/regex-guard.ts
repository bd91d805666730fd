import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";

/** Matches the lines of one text: `(text, regex, rel, lineBase, maxText) => matches`. */
export type LineMatcher<M> = (
  text: string,
  regex: RegExp,
  rel: string,
  lineBase: number,
  maxText: number,
) => M[];

/** The matches of one file, as a batch reports them (files in the order they were added). */
export interface FileMatches<M> {
  rel: string;
  /** The path the file was read from. */
  abs: string;
  matches: M[];
}

interface Piece {
  start: number;
  end: number;
  lineBase: number;
  rel: string;
}

interface Batch<M> {
  seq: number;
  files: Array<{ rel: string; abs: string; pieces: number }>;
  pieces: Piece[];
  resolve: (files: FileMatches<M>[]) => void;
  reject: (error: Error) => void;
}

interface Running {
  worker: Worker;
  port: MessagePort;
  /** [batch being matched (0: none), piece being matched]: written by the worker. */
  state: Int32Array;
  /** Pool key: the matching code it was started with. */
  key: string;
  /** Where its answers and failures go: the search using it. */
  onReply?: (reply: Reply<unknown>) => void;
  onError?: (error: Error) => void;
}

/**
 * Workers kept between searches (a new one costs tens of ms, and its JIT starts cold), by
 * matching code. A worker goes back only when idle and healthy; a timed-out one is
 * terminated.
 */
const idleWorkers = new Map<string, Running[]>();
const MAX_IDLE = 2;

/**
 * Runs a caller's regular expression over file contents in a worker thread, with a time
 * limit per text. JavaScript has no bound on backtracking: `(a+)+$` against forty `a`s and
 * a `b` runs for minutes, and on the thread that serves every other request. Here a text that
 * takes longer than `limitMs` gets the worker terminated (which stops a regex mid-match) and
 * the search fails with an error naming the file.
 *
 * The search thread reads files and copies their bytes into batches (4 MiB by default);
 * the worker decodes and matches them while the next batch is read, so a regex search uses
 * both cores. One round trip per file was ten times slower (waking a thread costs tens of µs
 * on these VMs); a synchronous round trip per batch was twice as slow as matching inline.
 *
 * The worker compiles `match` from its source, so the matching code is the same function in
 * both places and needs no file of its own next to the compiled output.
 */
export class RegexGuard<M> {
  readonly #source: string;
  readonly #flags: string;
  readonly #match: string;
  readonly #maxText: number;
  readonly #limitMs: number;
  readonly #batchBytes: number;
  #running: Running | undefined;
  /** Batches the worker has not answered yet, in the order sent. */
  readonly #inFlight: Batch<M>[] = [];
  /** Their results, for {@link take}. */
  readonly #pending: Promise<FileMatches<M>[]>[] = [];
  #seq = 0;
  #watchdog: NodeJS.Timeout | undefined;
  #watched = { key: -1, since: 0 };
  // The batch being gathered, in a buffer that goes to the worker and comes back for reuse.
  #bytes: Buffer | undefined;
  readonly #spare: Buffer[] = [];
  #used = 0;
  #pieces: Piece[] = [];
  #files: Array<{ rel: string; abs: string; pieces: number }> = [];
  #fileStart = { used: 0, pieces: 0 };

  /**
   * @param match a self-contained function: it sees only its arguments and the globals,
   *   since it is compiled again inside the worker.
   */
  constructor(
    regex: RegExp,
    match: LineMatcher<M>,
    options: { maxText: number; limitMs: number; batchBytes?: number },
  ) {
    this.#source = regex.source;
    this.#flags = regex.flags;
    this.#match = match.toString();
    this.#maxText = options.maxText;
    this.#limitMs = options.limitMs;
    this.#batchBytes = options.batchBytes ?? 4 * 1024 * 1024;
  }

  /** Adds a text of file `rel` (its bytes are copied): `lineBase` is its first line's number. */
  add(bytes: Uint8Array, rel: string, lineBase: number): void {
    this.#bytes ??= this.#spare.pop() ?? Buffer.allocUnsafeSlow(this.#batchBytes + 2 * 1024 * 1024);
    let target = this.#bytes;
    if (this.#used + bytes.length > target.length) {
      // One file larger than what is left of the batch: the buffer grows.
      const grown = Buffer.allocUnsafeSlow(2 * (this.#used + bytes.length));
      target.copy(grown, 0, 0, this.#used);
      this.#bytes = target = grown;
    }
    target.set(bytes, this.#used);
    this.#pieces.push({ start: this.#used, end: this.#used + bytes.length, lineBase, rel });
    this.#used += bytes.length;
  }

  /** The current file's texts are all added; a full batch goes to the worker. */
  endFile(rel: string, abs: string): void {
    const pieces = this.#pieces.length - this.#fileStart.pieces;
    if (pieces > 0) this.#files.push({ rel, abs, pieces });
    this.#fileStart = { used: this.#used, pieces: this.#pieces.length };
    if (this.#used >= this.#batchBytes) this.flush();
  }

  /** Forgets what was added of the current file (it was skipped after all). */
  dropFile(): void {
    this.#used = this.#fileStart.used;
    this.#pieces.length = this.#fileStart.pieces;
  }

  /** Sends the batch gathered so far to the worker. */
  flush(): void {
    if (this.#files.length === 0) return;
    const seq = ++this.#seq;
    const bytes = this.#bytes!;
    const files = this.#files;
    const pieces = this.#pieces;
    this.#bytes = undefined;
    this.#used = 0;
    this.#pieces = [];
    this.#files = [];
    this.#fileStart = { used: 0, pieces: 0 };
    this.#running ??= this.#start();
    const running = this.#running;
    const done = new Promise<FileMatches<M>[]>((resolve, reject) =>
      this.#inFlight.push({ seq, files, pieces, resolve, reject }),
    );
    done.catch(() => {}); // handled by whoever takes it
    this.#pending.push(done);
    running.port.ref();
    running.port.postMessage({ seq, source: this.#source, flags: this.#flags, bytes, pieces }, [
      bytes.buffer as ArrayBuffer,
    ]);
    this.#watch();
  }

  /** Batches sent and not yet taken. */
  get waiting(): number {
    return this.#pending.length;
  }

  /** The oldest batch's matches (batches finish in the order they were sent). */
  take(): Promise<FileMatches<M>[]> | undefined {
    return this.#pending.shift();
  }

  /** Ends the search: an idle worker goes back to the pool, a busy one is stopped. */
  close(): void {
    const running = this.#running;
    if (running === undefined || this.#inFlight.length > 0) {
      this.#stop(new Error("the search ended"));
      return;
    }
    this.#running = undefined;
    clearInterval(this.#watchdog);
    this.#watchdog = undefined;
    running.onReply = undefined;
    running.onError = undefined;
    running.port.unref();
    const pool = idleWorkers.get(running.key) ?? [];
    if (pool.length >= MAX_IDLE) void running.worker.terminate();
    else idleWorkers.set(running.key, [...pool, running]);
  }

  #start(): Running {
    const key = `${this.#maxText}\0${this.#match}`;
    const running = idleWorkers.get(key)?.pop() ?? spawnWorker(key, this.#match, this.#maxText);
    running.onReply = (reply) => this.#onReply(reply as Reply<M>);
    running.onError = (error) => this.#stop(error);
    return running;
  }

  #onReply(reply: Reply<M>): void {
    if (this.#spare.length < 4) this.#spare.push(Buffer.from(reply.bytes.buffer));
    const at = this.#inFlight.findIndex((b) => b.seq === reply.seq);
    if (at === -1) return;
    const [batch] = this.#inFlight.splice(at, 1) as [Batch<M>];
    if (this.#inFlight.length === 0) this.#running?.port.unref();
    if (reply.error !== undefined) {
      batch.reject(new Error(reply.error));
      return;
    }
    const value = reply.value!;
    let next = 0;
    batch.resolve(
      batch.files.map((file) => {
        const matches = value.slice(next, next + file.pieces).flat();
        next += file.pieces;
        return { rel: file.rel, abs: file.abs, matches };
      }),
    );
  }

  /** Checks now and then that the worker is not stuck on one text for longer than the limit. */
  #watch(): void {
    if (this.#watchdog !== undefined) return;
    this.#watched = { key: -1, since: performance.now() };
    this.#watchdog = setInterval(
      () => {
        const running = this.#running;
        if (running === undefined || this.#inFlight.length === 0) {
          clearInterval(this.#watchdog);
          this.#watchdog = undefined;
          return;
        }
        const seq = Atomics.load(running.state, 0);
        const piece = Atomics.load(running.state, 1);
        const key = seq * 65_536 + piece;
        const now = performance.now();
        if (seq === 0 || key !== this.#watched.key) {
          this.#watched = { key, since: now };
          return;
        }
        if (now - this.#watched.since < this.#limitMs) return;
        const rel = this.#inFlight.find((b) => b.seq === seq)?.pieces[piece]?.rel ?? "a file";
        this.#stop(new RegexTimeoutError(this.#limitMs, rel));
      },
      Math.max(10, Math.min(250, this.#limitMs / 4)),
    );
  }

  #stop(error: Error): void {
    clearInterval(this.#watchdog);
    this.#watchdog = undefined;
    const running = this.#running;
    this.#running = undefined;
    if (running !== undefined) {
      running.onReply = undefined;
      running.onError = undefined;
      running.port.close();
      void running.worker.terminate();
    }
    for (const batch of this.#inFlight.splice(0)) batch.reject(error);
  }
}

function spawnWorker(key: string, match: string, maxText: number): Running {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { port: port2, state, match, maxText },
    transferList: [port2],
  });
  const running: Running = { worker, port: port1, state, key };
  worker.unref();
  port1.unref();
  worker.on("error", (error) => running.onError?.(error));
  worker.on("exit", () => {
    const pool = idleWorkers.get(key);
    if (pool !== undefined)
      idleWorkers.set(
        key,
        pool.filter((r) => r !== running),
      );
  });
  port1.on("message", (reply: Reply<unknown>) => running.onReply?.(reply));
  return running;
}

/** The worker's answer to one batch; the batch's buffer comes back with it. */
interface Reply<M> {
  seq: number;
  bytes: Uint8Array;
  value?: M[][];
  error?: string;
}

/** A regular expression that ran past its time limit (catastrophic backtracking, most likely). */
export class RegexTimeoutError extends Error {
  readonly limitMs: number;
  /** The file (root-relative) it was matching when time ran out. */
  readonly rel: string;
  constructor(limitMs: number, rel: string) {
    super(`the regular expression ran longer than ${limitMs} ms on ${rel}`);
    this.name = "RegexTimeoutError";
    this.limitMs = limitMs;
    this.rel = rel;
  }
}

const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const { port, state, maxText } = workerData;
const match = (0, eval)("(" + workerData.match + ")");
let regex;
port.on("message", ({ seq, source, flags, bytes, pieces }) => {
  try {
    if (regex === undefined || regex.source !== source || regex.flags !== flags) regex = new RegExp(source, flags);
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const value = [];
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      Atomics.store(state, 1, i);
      Atomics.store(state, 0, seq);
      value.push(match(text.toString("utf8", p.start, p.end), regex, p.rel, p.lineBase, maxText));
    }
    Atomics.store(state, 0, 0);
    port.postMessage({ seq, bytes, value }, [bytes.buffer]);
  } catch (error) {
    Atomics.store(state, 0, 0);
    port.postMessage({ seq, bytes, error: String(error && error.message ? error.message : error) }, [bytes.buffer]);
  }
});
`;
