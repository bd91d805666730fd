import type { Gateway } from "../gateway/gateway.js";
import type { CallEnd, CallWatcher, WatchedCall } from "../interceptors/watching.js";

/** A finished call as the dashboard lists it. */
export interface FinishedCall extends WatchedCall, CallEnd {}

/** What a {@link CallFeed} tells its subscribers. */
export type FeedEvent =
  | { type: "call-started"; call: WatchedCall }
  | { type: "call-ended"; call: FinishedCall }
  /** Server states or the catalog changed: read the state again. */
  | { type: "changed" };

/** Finished calls kept for a page that opens later. */
const RECENT = 200;

/**
 * The gateway's forwarded calls as they run and end, and a signal when servers or the
 * catalog change: what the dashboard's live view is made of. Keeps the calls in flight and
 * the last {@link RECENT} finished ones, so a page opened now shows what just happened.
 */
export class CallFeed {
  /**
   * Calls in flight, oldest first (a set keeps the order it was given): calls end in any order,
   * and a set takes one out at once however many are in flight, where an array's `indexOf` and
   * `splice` grew with them.
   */
  readonly #active = new Set<WatchedCall>();
  /** A ring of finished calls; `#next` is where the next one goes. */
  readonly #recent: FinishedCall[] = [];
  #next = 0;
  readonly #subscribers = new Set<(event: FeedEvent) => void>();
  readonly #off: Array<() => void>;

  constructor(gateway: Gateway) {
    const watcher: CallWatcher = {
      started: (call) => {
        this.#active.add(call);
        if (this.#subscribers.size > 0) this.#send({ type: "call-started", call });
      },
      ended: (call, end) => {
        this.#active.delete(call);
        const finished = finishedCall(call, end);
        if (this.#recent.length < RECENT) this.#recent.push(finished);
        else this.#recent[this.#next] = finished;
        this.#next = (this.#next + 1) % RECENT;
        if (this.#subscribers.size > 0) this.#send({ type: "call-ended", call: finished });
      },
    };
    this.#off = [
      gateway.watchCalls(watcher),
      gateway.hub.on((event) => {
        if (event.type === "server-state" || event.type === "catalog-changed")
          this.#send({ type: "changed" });
      }),
    ];
  }

  /** Calls in flight, oldest first. */
  active(): WatchedCall[] {
    return [...this.#active];
  }

  /** Finished calls, newest first. */
  recent(): FinishedCall[] {
    const n = this.#recent.length;
    const out: FinishedCall[] = [];
    for (let i = 1; i <= n; i++) out.push(this.#recent[(this.#next - i + n) % n]!);
    return out;
  }

  /** Receives every event from now on; returns the unsubscribe function. */
  subscribe(subscriber: (event: FeedEvent) => void): () => void {
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Stops watching the gateway. */
  close(): void {
    for (const off of this.#off) off();
    this.#subscribers.clear();
  }

  #send(event: FeedEvent): void {
    for (const subscriber of this.#subscribers) subscriber(event);
  }
}

/**
 * `{ ...call, ...end }`, built member by member: spreading objects of several shapes (a call
 * has optional members) went through V8's slow paths on every call.
 */
function finishedCall(call: WatchedCall, end: CallEnd): FinishedCall {
  const finished: FinishedCall = {
    id: call.id,
    method: call.method,
    subject: call.subject,
    protocolVersion: call.protocolVersion,
    startedAt: call.startedAt,
    outcome: end.outcome,
    ms: end.ms,
  };
  if (call.target !== undefined) finished.target = call.target;
  if (call.server !== undefined) finished.server = call.server;
  if (call.profile !== undefined) finished.profile = call.profile;
  if (call.client !== undefined) finished.client = call.client;
  if (end.decisions !== undefined) finished.decisions = end.decisions;
  if (end.error !== undefined) finished.error = end.error;
  return finished;
}
