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
   * The calls in flight per server, in arrays that stay when they empty: a call is added and
   * removed on every `tools/call`, and an array's push and pop are the cheapest way to do that.
   */
  readonly #inflight = new Map<string, RequestContext[]>();

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
      calls = [];
      this.#inflight.set(server, calls);
    }
    const ctx = request.context;
    calls.push(ctx);
    try {
      return await next(request);
    } finally {
      if (calls[calls.length - 1] === ctx) calls.pop();
      else calls.splice(calls.indexOf(ctx), 1);
    }
  }

  /**
   * Sends `server`'s log message to the calls in flight on it whose clients asked for that
   * level (2025 clients that set none get everything).
   */
  relay(server: string, params: Record<string, unknown>): void {
    const calls = this.#inflight.get(server);
    if (calls === undefined) return;
    // A copy: a notification may end a call (and change the list) while this loop runs.
    const copy = [...calls];
    for (let i = 0; i < copy.length; i++) {
      const ctx = copy[i]!;
      // One message per client request, however many of its calls run on the server (a script's).
      if (copy.indexOf(ctx) !== i) continue;
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
