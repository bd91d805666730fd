import { RpcError } from "../errors.js";
import { ErrorCode } from "../protocol/error-codes.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";
import type { Upstream } from "../upstream/upstream.js";

/** A call's place among the calls in flight on one connection (see {@link ServerRequestRouter.register}). */
export interface Slot {
  handler: ServerRequestHandler;
  /** The client session the call is made for (a call of its own when it has none). */
  client: object;
  /** Server requests delivered to this call and not answered yet. */
  outstanding: number;
  /** When the oldest of them was delivered. */
  waitingSince: number;
}

/**
 * A server asks for the inputs of one round together; a call that has been waiting on
 * an answer for longer than this is not the one asking now.
 */
const ROUND_MS = 200;

/**
 * Sends a server-to-client request (2025 sampling, elicitation, roots) to the call
 * that caused it. A 2025 stdio server does not say which call that is, so the router
 * infers it: among the calls in flight on that connection with their own handler, the
 * one not already waiting for an answer (a server asks a round's questions together,
 * so a call still asking within {@link ROUND_MS} counts); if that is still ambiguous, the request goes
 * to the hub-wide handler, or is declined — never to a guess, since the question might
 * reach the wrong person.
 */
export class ServerRequestRouter {
  /**
   * Per connection, its calls in flight; the set stays when they are done (calls come again).
   * Calls end in any order: a set takes one out at once however many are in flight.
   */
  readonly #calls = new WeakMap<Upstream, Set<Slot>>();
  /** Per connection, the client whose roots it was last given. */
  readonly #rootsHolder = new WeakMap<Upstream, object>();
  readonly #fallback: () => ServerRequestHandler | undefined;

  constructor(fallback: () => ServerRequestHandler | undefined) {
    this.#fallback = fallback;
  }

  /**
   * Registers a call's handler while the call is in flight; {@link unregister} the slot it
   * returns when the call ends. `client` stands for the session the call is made for; a call
   * without one is its own client. Every call of a 2025 session comes here: one object, no closure.
   */
  register(upstream: Upstream, handler: ServerRequestHandler, client: object = {}): Slot {
    const slot: Slot = { handler, client, outstanding: 0, waitingSince: 0 };
    const slots = this.#calls.get(upstream);
    if (slots === undefined) this.#calls.set(upstream, new Set([slot]));
    else slots.add(slot);
    return slot;
  }

  /** Ends what {@link register} began. */
  unregister(upstream: Upstream, slot: Slot): void {
    this.#calls.get(upstream)?.delete(slot);
  }

  /**
   * Whether a call for `client` must first tell `upstream` that the roots changed: the server
   * was last given another client's roots (and may have kept them). Forgets that client, so
   * the server is told once; the roots it asks for next are the new client's.
   */
  rootsChangeFor(upstream: Upstream, client: object): boolean {
    const holder = this.#rootsHolder.get(upstream);
    if (holder === undefined || holder === client) return false;
    this.#rootsHolder.delete(upstream);
    return true;
  }

  /** The handler for a server request arriving now from `upstream`, if anyone can answer it. */
  handlerFor(upstream: Upstream): ServerRequestHandler | undefined {
    const slots = this.#calls.get(upstream);
    if (slots === undefined || slots.size === 0) return this.#fallback();
    const now = Date.now();
    // A call whose handler says it is waiting on its client (parked) asks nothing new.
    const all = [...slots];
    const live = all.length === 1 ? all : all.filter((s) => s.handler.waiting?.() !== true);
    const asking = live.filter((s) => s.outstanding === 0 || now - s.waitingSince < ROUND_MS);
    const slot = live.length === 1 ? live[0] : asking.length === 1 ? asking[0] : undefined;
    if (slot === undefined) {
      const fallback = this.#fallback();
      if (fallback !== undefined) return fallback;
      return () =>
        Promise.reject(
          new RpcError(
            ErrorCode.InternalError,
            `mcplex: cannot tell which of ${slots.size} calls in flight on "${upstream.name}" this request belongs to, so it is declined`,
          ),
        );
    }
    return async (request) => {
      if (slot.outstanding++ === 0) slot.waitingSince = Date.now();
      try {
        const answer = await slot.handler(request);
        if (request.method === "roots/list") this.#rootsHolder.set(upstream, slot.client);
        return answer;
      } finally {
        slot.outstanding--;
      }
    };
  }
}
