import type { CallRequest, Handler, Interceptor, JsonObject, RequestContext } from "../hub/call-pipeline.js";
import { interceptor } from "../hub/call-pipeline.js";
import { logPasses } from "../protocol/log-levels.js";

/**
 * Relays an upstream's log messages to the clients whose tool calls are running on it: an
 * interceptor keeps the calls in flight per server, and {@link relay} sends a message to
 * those whose clients asked for its level.
 */
export class LogRelay {
  /**
   * The calls in flight per server: each request's context with the number of its calls
   * running there (a script's may run several), in maps that stay when they empty. A call is
   * added and removed on every `tools/call`, in any order; a map does both at once whatever
   * the number in flight (an array's `indexOf` and `splice` grew with it: 5% of a gateway's
   * time at 64 in flight).
   */
  readonly #inflight = new Map<string, Map<RequestContext, number>>();

  /** Keeps each tool call in the list of its server while it runs. */
  // Not async: a call no message can reach (a 2026 client's that asked for no level; `relay`
  // sends such a client nothing) passes straight to `next`, with no promise of this layer's own.
  readonly interceptor: Interceptor = interceptor({ needs: "raw" }, (next) => (request) => {
    const server = request.target?.server;
    if (request.method !== "tools/call" || server === undefined) return next(request);
    const ctx = request.context;
    if (ctx.stateless && ctx.logLevel === undefined) return next(request);
    return this.#tracked(request, server, next);
  });

  async #tracked(request: CallRequest, server: string, next: Handler): Promise<JsonObject> {
    let calls = this.#inflight.get(server);
    if (calls === undefined) {
      calls = new Map();
      this.#inflight.set(server, calls);
    }
    const ctx = request.context;
    calls.set(ctx, (calls.get(ctx) ?? 0) + 1);
    try {
      return await next(request);
    } finally {
      const left = calls.get(ctx)! - 1;
      if (left === 0) calls.delete(ctx);
      else calls.set(ctx, left);
    }
  }

  /**
   * Sends `server`'s log message to the calls in flight on it whose clients asked for that
   * level (2025 clients that set none get everything).
   */
  relay(server: string, params: Record<string, unknown>): void {
    const calls = this.#inflight.get(server);
    if (calls === undefined || calls.size === 0) return;
    // A copy: a notification may end a call (and change the map) while this loop runs. A
    // context is in it once however many of its calls run on the server (a script's): one
    // message per client request.
    for (const ctx of [...calls.keys()]) {
      if (
        ctx.stateless
          ? logPasses(params.level, ctx.logLevel)
          : ctx.logLevel === undefined || logPasses(params.level, ctx.logLevel)
      ) {
        ctx.notify("notifications/message", params);
      }
    }
  }
}
