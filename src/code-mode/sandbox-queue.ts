/**
 * Who gets the next sandbox worker: each client (a token, or an address without tokens) has its
 * own queue, and a script of one client never waits behind another client's backlog.
 *
 * An infinite loop holds its worker until its time limit (30 s by default), and a script
 * cannot be preempted (the tool calls it made are done), so sharing {@link MAX_WORKERS} workers
 * first come first served let one client's loops hold everyone's scripts for as long as it kept
 * sending them. Here a client's share is:
 *
 * - one worker whenever it has a script and none running: the pool grows past its shared
 *   workers for it, up to {@link WORKER_CEILING} threads in all, so another client's script
 *   starts at once whatever one client runs (one client holds at most {@link MAX_WORKERS});
 * - beyond that, the shared workers while free, handed out in turn between the clients with
 *   scripts waiting (round robin), so one client's backlog never starves another's and a lone
 *   client still uses every worker.
 *
 * A script waits at most `queueMs`, and at most `maxQueued` scripts of one client wait at once:
 * past either bound the script is refused with CODE_BUSY, which says when to retry.
 */
import { availableParallelism } from "node:os";
import { CodeModeError } from "./code-mode-error.js";

/**
 * Scripts running at once in the process for clients' second and later scripts (one worker
 * each): each worker costs a thread, a V8 isolate and its sandbox's memory, so a flood of
 * run_code calls must not start one each.
 */
export const MAX_WORKERS = Math.max(2, availableParallelism());
/** Most workers in all, counting those started for a client's only script while the others are busy. */
export const WORKER_CEILING = 2 * MAX_WORKERS;
/** Past a script's time limit, when its worker is surely free: the pool's grace, and its start. */
const END_MARGIN_MS = 1_000;

/** What bounds one script's wait (from its limits). */
export interface QueueBounds {
  /** Longest wait for a worker (ms). */
  queueMs: number;
  /** Scripts of one client that may wait at once. */
  maxQueued: number;
  /** The script's time limit once it runs (ms), for the retry-after of the scripts behind it. */
  wallMs: number;
}

/** A worker granted to one script. */
export interface WorkerSlot {
  /** How long the script waited for it (ms). */
  readonly waitedMs: number;
  /** Gives it back, and the next script in turn gets it; safe to call twice. */
  release(): void;
}

/** A script the queue let run, or refused as busy. */
export type QueueEvent =
  | { type: "started"; waitedMs: number }
  | { type: "refused"; waitedMs: number; reason: "queue-full" | "queue-timeout" };

interface Waiter {
  admit(): void;
}

/**
 * The fair queue in front of the sandbox workers (see the file's comment); the process has one,
 * {@link sandboxQueue}.
 *
 * @example
 * const slot = await sandboxQueue.acquire("token#0", { queueMs: 10_000, maxQueued: 16, wallMs: 30_000 }, signal);
 * try { await runOnWorker() } finally { slot.release() }
 */
export class SandboxQueue {
  readonly #workers: number;
  readonly #ceiling: number;
  #running = 0;
  #waitingCount = 0;
  #refused = 0;
  /** Client → when each of its running scripts is over at the latest (epoch ms). */
  readonly #holding = new Map<string, Set<{ endsBy: number }>>();
  /** Client → its scripts waiting, first come first; the map's order is the clients' turn. */
  readonly #waiting = new Map<string, Waiter[]>();
  readonly #listeners = new Set<(event: QueueEvent) => void>();

  constructor(options: { workers: number; ceiling: number }) {
    this.#workers = options.workers;
    this.#ceiling = Math.max(options.ceiling, options.workers);
  }

  /**
   * Waits for a worker for one of `client`'s scripts. Rejects with CODE_BUSY when `client`
   * already has `maxQueued` scripts waiting (at once) or the wait passes `queueMs`, and with
   * REQUEST_ABORTED when `signal` aborts first.
   */
  acquire(client: string, bounds: QueueBounds, signal?: AbortSignal): Promise<WorkerSlot> {
    const since = performance.now();
    if (signal?.aborted) return Promise.reject(cancelled(signal));
    const queue = this.#waiting.get(client) ?? [];
    if (queue.length === 0 && this.#admissible(client))
      return Promise.resolve(this.#start(client, bounds, since));
    if (queue.length >= bounds.maxQueued) {
      this.#refuse("queue-full", 0);
      return Promise.reject(
        busy(
          `${queue.length === 1 ? "1 script" : `${queue.length} scripts`} of this client already ${queue.length === 1 ? "waits" : "wait"} for a worker (limits.maxQueued is ${bounds.maxQueued})`,
          this.#retryAfterMs(client),
          {
            path: "limits.maxQueued",
            hint: "Send the next script when one of this client's scripts has ended, or have the host raise limits.maxQueued.",
          },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const onStop = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onStop);
        const mine = this.#waiting.get(client);
        const index = mine?.indexOf(waiter) ?? -1;
        if (mine === undefined || index < 0) return;
        mine.splice(index, 1);
        if (mine.length === 0) this.#waiting.delete(client);
        this.#waitingCount--;
        if (signal?.aborted) return reject(cancelled(signal));
        const waitedMs = performance.now() - since;
        this.#refuse("queue-timeout", waitedMs);
        const holders = this.#holding.has(client) ? "this client's other scripts" : "other clients' scripts";
        reject(
          busy(
            `this script waited ${bounds.queueMs} ms for a worker (limits.queueMs) while ${holders} held them`,
            this.#retryAfterMs(client),
            {
              path: "limits.queueMs",
              hint: "Send fewer scripts at once (one script can call many tools with Promise.all), or have the host raise limits.queueMs.",
            },
          ),
        );
      };
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onStop);
          resolve(this.#start(client, bounds, since));
        },
      };
      // A timer, not `AbortSignal.any([signal, AbortSignal.timeout(queueMs)])`: Node holds a
      // timeout signal only while it has listeners of its own, and `any` watches it weakly, so a
      // full collection of the heap took the deadline away (src/protocol/deadline-signal.ts, which
      // code mode does not import). The timer list holds this one; unreferenced, as that was.
      const timer = setTimeout(onStop, bounds.queueMs);
      timer.unref();
      signal?.addEventListener("abort", onStop, { once: true });
      queue.push(waiter);
      this.#waiting.set(client, queue);
      this.#waitingCount++;
      this.#pump();
    });
  }

  /** Scripts running and waiting now, and those refused as busy since the process started. */
  stats(): { running: number; waiting: number; refused: number } {
    return { running: this.#running, waiting: this.#waitingCount, refused: this.#refused };
  }

  /** Calls `listener` for each script started or refused; returns the function that stops it. */
  watch(listener: (event: QueueEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A client's only script may grow the pool up to the ceiling; its others need a shared worker free. */
  #admissible(client: string): boolean {
    const mine = this.#holding.get(client)?.size ?? 0;
    return this.#running < (mine === 0 ? this.#ceiling : this.#workers);
  }

  #start(client: string, bounds: QueueBounds, since: number): WorkerSlot {
    this.#running++;
    const held = { endsBy: Date.now() + bounds.wallMs + END_MARGIN_MS };
    const mine = this.#holding.get(client) ?? new Set();
    mine.add(held);
    this.#holding.set(client, mine);
    const waitedMs = performance.now() - since;
    this.#emit({ type: "started", waitedMs });
    let released = false;
    return {
      waitedMs,
      release: () => {
        if (released) return;
        released = true;
        this.#running--;
        mine.delete(held);
        if (mine.size === 0) this.#holding.delete(client);
        this.#pump();
      },
    };
  }

  /**
   * Starts waiting scripts while any may run. A client with nothing running goes first (at the
   * ceiling, its one worker is what it waits for); then clients take turns, one served going
   * last.
   */
  #pump(): void {
    for (;;) {
      let next: string | undefined;
      for (const client of this.#waiting.keys()) {
        if (!this.#admissible(client)) continue;
        if (!this.#holding.has(client)) {
          next = client;
          break;
        }
        next ??= client;
      }
      if (next === undefined) return;
      const queue = this.#waiting.get(next)!;
      const waiter = queue.shift()!;
      this.#waiting.delete(next);
      if (queue.length > 0) this.#waiting.set(next, queue);
      this.#waitingCount--;
      waiter.admit();
    }
  }

  /** When a worker is sure to be free for `client`: its own scripts' end, else anyone's. */
  #retryAfterMs(client: string): number {
    const mine = this.#holding.get(client);
    const holders = mine ?? [...this.#holding.values()].flatMap((set) => [...set]);
    let soonest = Number.POSITIVE_INFINITY;
    for (const { endsBy } of holders) soonest = Math.min(soonest, endsBy);
    return Number.isFinite(soonest) ? Math.max(1_000, soonest - Date.now()) : 1_000;
  }

  #refuse(reason: "queue-full" | "queue-timeout", waitedMs: number): void {
    this.#refused++;
    this.#emit({ type: "refused", waitedMs, reason });
  }

  #emit(event: QueueEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

/** The process's queue in front of its sandbox workers. */
export const sandboxQueue = new SandboxQueue({ workers: MAX_WORKERS, ceiling: WORKER_CEILING });

function busy(why: string, retryAfterMs: number, fields: { path: string; hint: string }): CodeModeError {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new CodeModeError("CODE_BUSY", `The code sandbox is busy: ${why}; retry after ${seconds} s.`, {
    ...fields,
    retryable: true,
    retryAt: Date.now() + retryAfterMs,
  });
}

function cancelled(signal: AbortSignal): CodeModeError {
  return new CodeModeError(
    "REQUEST_ABORTED",
    "The run was cancelled by its caller before a sandbox was free.",
    { hint: "Nothing to fix in the script; run it again if it is still wanted." },
    { cause: signal.reason },
  );
}
