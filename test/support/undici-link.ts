/**
 * undici's `Pool.dispatch` behind the {@link ReplicaLink} interface (`send(origin, request,
 * handler)`), so that the replica-link bench and the malformed-answer test drive both clients
 * the same way. It uses undici's own handler API (`onConnect`/`onHeaders`/`onData`/...), the
 * path its core calls directly: the newer `onResponseStart` API goes through an adapter that
 * parses every header into an object first, which a relay does not need.
 *
 * undici is a transitive dependency here (of @modelcontextprotocol/conformance), not a direct
 * one: this adapter is for measuring and testing only.
 */
import { Pool } from "undici";
import type { LinkControl, LinkHandler, LinkRequest } from "../../src/cluster/replica-link.js";

export class UndiciLink {
  readonly #pools = new Map<string, Pool>();
  readonly #connections: number;

  /** `connections`: sockets per origin (undici's default is no limit). */
  constructor(options: { connections?: number } = {}) {
    this.#connections = options.connections ?? 64;
  }

  send(origin: URL, request: LinkRequest, handler: LinkHandler): LinkControl {
    let pool = this.#pools.get(origin.origin);
    if (pool === undefined) {
      pool = new Pool(origin.origin, { connections: this.#connections, pipelining: 1 });
      this.#pools.set(origin.origin, pool);
    }
    let abortRequest: ((error?: Error) => void) | undefined;
    let resumeReading: (() => void) | undefined;
    let aborted = false;
    let settled = false;
    let connected = false;
    let begun = false;
    const headers: string[] = [];
    for (const name in request.headers) {
      const value = request.headers[name]!;
      if (typeof value === "string") headers.push(name, value);
      else for (const one of value) headers.push(name, one);
    }
    pool.dispatch(
      {
        method: request.method as "POST",
        path: request.path,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      },
      {
        onConnect(abort) {
          abortRequest = abort;
          connected = true;
          if (aborted) abort(new Error("aborted"));
        },
        onHeaders(status, rawHeaders, resume) {
          begun = true;
          resumeReading = resume;
          const flat: string[] = [];
          for (let i = 0; i < rawHeaders.length; i += 2)
            flat.push(rawHeaders[i]!.toString("latin1").toLowerCase(), rawHeaders[i + 1]!.toString("latin1"));
          handler.head(status, flat);
          return true;
        },
        onData(chunk) {
          return handler.data(chunk) !== false;
        },
        onComplete() {
          if (settled) return;
          settled = true;
          handler.end();
        },
        onError(error) {
          if (settled) return;
          settled = true;
          handler.fail(error, connected || begun);
        },
      },
    );
    // Methods, not arrow functions: the bench runs this file through tsx, whose esbuild would
    // wrap every arrow function it names in a helper call, a cost ReplicaLink (from dist/) does
    // not pay.
    return {
      abort() {
        aborted = true;
        abortRequest?.(new Error("aborted"));
      },
      resume() {
        resumeReading?.();
      },
    };
  }

  /** Closes every pool's connections now. */
  close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    return Promise.all(pools.map((pool) => pool.destroy())).then(() => {});
  }
}
