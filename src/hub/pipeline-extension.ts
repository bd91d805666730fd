import type { CallRequest } from "./call-pipeline.js";
import {
  compose,
  type Handler,
  type Interceptor,
  type JsonObject,
  needsParsedResults,
} from "./call-pipeline.js";

/** What a {@link PipelineExtension} reads of the hub's pipeline: its interceptors, and when they change. */
export interface ExtendedPipeline {
  /** The hub's interceptors on the path of every call, the first outermost. */
  readonly interceptors: readonly Interceptor[];
  /** Changes each time `hub.use` adds or removes one. */
  readonly revision: number;
  /**
   * Changes each time the hub's servers do (one added, removed, turned on or off, listing
   * again): the catalog's revision. A layer may compose by the servers there are (see
   * {@link PipelineExtension}).
   */
  readonly serversRevision: number;
}

/** Where the layers of a {@link PipelineExtension} go, and what ends it. */
export interface PipelineExtensionOptions {
  /**
   * Outside the hub's interceptors, the first outermost, fixed: they see each request as it
   * came and how it ended whichever layer answered or refused it (a gateway's SERVER spans and
   * audit trail).
   */
  outer?: readonly Interceptor[];
  /** Inside the hub's interceptors, the first outermost; {@link PipelineExtension.use} adds more. */
  interceptors?: readonly Interceptor[];
  /** Innermost, fixed: the extender's own layers (a gateway's cache, views, client input). */
  inner?: readonly Interceptor[];
  /**
   * The handler inside every layer, given the hub's dispatch (the send to the server a
   * request's target names, which no interceptor wraps): a gateway's method table.
   */
  end(dispatch: Handler): Handler;
}

/**
 * The hub's pipeline extended by a caller with layers of its own (a gateway): `outer` (and those
 * of {@link useOuter}), then the hub's interceptors, then the extension's own (`interceptors`,
 * {@link use}), then `inner`, around `end`. The hub's dispatch is handed only to `end`, inside the hub's interceptors: no request
 * reaches a server around them. Composed again when either list changes, never per request, and
 * when the hub's servers change: a layer that can act on no call with the servers there are (the
 * result cache, while no server is configured with `cache:`) may then hand back `next` itself,
 * and stays off every call's path until they change again.
 */
export class PipelineExtension {
  readonly #hub: ExtendedPipeline;
  readonly #outer: readonly Interceptor[];
  /** Added by {@link useOuter}: inside {@link #outer}, outside the hub's interceptors. */
  readonly #watchers: Interceptor[] = [];
  readonly #own: Interceptor[];
  readonly #inner: readonly Interceptor[];
  readonly #end: Handler;
  /** The hub's revisions {@link #handler} was composed with. */
  #hubRevision = -1;
  #serversRevision = -1;
  #handler!: Handler;
  #raw = false;

  /** @internal Made by `hub.extend`, which holds the dispatch. */
  constructor(hub: ExtendedPipeline, options: PipelineExtensionOptions, dispatch: Handler) {
    this.#hub = hub;
    this.#outer = options.outer ?? [];
    this.#own = [...(options.interceptors ?? [])];
    this.#inner = options.inner ?? [];
    this.#end = options.end(dispatch);
    this.#compose();
  }

  /**
   * Runs `request` through every layer. Not async: a promise of its own on every request's way
   * would be one more microtask turn there and back.
   */
  handle(request: CallRequest): Promise<JsonObject> {
    if (this.#stale()) this.#compose();
    return this.#handler(request);
  }

  /**
   * Whether results may reach the layers as the server's text (`CallOptions.rawResult`): while
   * no interceptor on the path needs them parsed (see `ResultNeeds`).
   */
  get rawResults(): boolean {
    if (this.#stale()) this.#compose();
    return this.#raw;
  }

  /** Adds an interceptor inside those added before it; returns the function that removes it. */
  use(interceptor: Interceptor): () => void {
    this.#own.push(interceptor);
    this.#compose();
    return () => {
      const at = this.#own.indexOf(interceptor);
      if (at === -1) return;
      this.#own.splice(at, 1);
      this.#compose();
    };
  }

  /**
   * Adds an interceptor outside the hub's interceptors (inside the fixed `outer` ones), to see
   * every request end as its caller sees it, refusals of the hub's layers (a policy, a
   * guardrail, a quota) included: a dashboard's list of calls. Returns the function that removes it.
   */
  useOuter(interceptor: Interceptor): () => void {
    this.#watchers.push(interceptor);
    this.#compose();
    return () => {
      const at = this.#watchers.indexOf(interceptor);
      if (at === -1) return;
      this.#watchers.splice(at, 1);
      this.#compose();
    };
  }

  /** Whether the hub's interceptors or servers changed since {@link #handler} was composed. */
  #stale(): boolean {
    return this.#hubRevision !== this.#hub.revision || this.#serversRevision !== this.#hub.serversRevision;
  }

  #compose(): void {
    this.#hubRevision = this.#hub.revision;
    this.#serversRevision = this.#hub.serversRevision;
    const layers = [
      ...this.#outer,
      ...this.#watchers,
      ...this.#hub.interceptors,
      ...this.#own,
      ...this.#inner,
    ];
    this.#raw = !needsParsedResults(layers);
    this.#handler = compose(layers, this.#end);
  }
}
