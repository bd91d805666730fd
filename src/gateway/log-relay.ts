import type { Interceptor, RequestContext } from "../hub/call-pipeline.js";
import { logPasses } from "../protocol/log-levels.js";

/**
 * Relays an upstream's log messages to the clients whose tool calls are running on it: an
 * interceptor keeps the calls in flight per server, and {@link relay} sends a message to
 * those whose clients asked for its level.
 */
export class LogRelay {
  readonly #inflight = new Map<string, Set<RequestContext>>();

  /** Keeps each tool call in the set of its server while it runs. */
  readonly interceptor: Interceptor = (next) => async (request) => {
    const server = request.target?.server;
    if (request.method !== "tools/call" || server === undefined) return next(request);
    let calls = this.#inflight.get(server);
    if (calls === undefined) {
      calls = new Set();
      this.#inflight.set(server, calls);
    }
    calls.add(request.context);
    try {
      return await next(request);
    } finally {
      // The server's set stays, empty, for its next call: one per configured server.
      calls.delete(request.context);
    }
  };

  /**
   * Sends `server`'s log message to the calls in flight on it whose clients asked for that
   * level (2025 clients that set none get everything).
   */
  relay(server: string, params: Record<string, unknown>): void {
    for (const ctx of this.#inflight.get(server) ?? []) {
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
