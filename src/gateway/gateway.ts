import type { Catalog } from "../catalog/catalog.js";
import type { CatalogTool } from "../catalog/types.js";
import { userRefOf } from "../credentials/user-ref.js";
import { McplexError, RpcError } from "../errors.js";
import { GatewayTasks } from "../ext/tasks/gateway-tasks.js";
import type {
  CallRequest,
  Interceptor,
  JsonObject,
  RequestContext,
  RequestTarget,
} from "../hub/call-pipeline.js";
import type { Hub, HubEvent } from "../hub/hub.js";
import type { PipelineExtension } from "../hub/pipeline-extension.js";
import { catalogViews, type ViewOf } from "../interceptors/catalog-views.js";
import { clientInput } from "../interceptors/client-input.js";
import { compositeCalls } from "../interceptors/composite-calls.js";
import { LogRelay } from "../interceptors/log-relay.js";
import { observing, type RequestSample } from "../interceptors/observing.js";
import { ResultCache, type ResultCacheOptions } from "../interceptors/result-cache.js";
import { type CallWatcher, watching } from "../interceptors/watching.js";
import { ErrorCode } from "../protocol/error-codes.js";
import type { ListKind } from "../protocol/list-changes.js";
import { type MethodRowInput, MethodTable } from "../protocol/method-table.js";
import { callOptionsOf, resolveTarget } from "./call-request.js";
import { type Channel, ClientSession, type SessionOptions } from "./client-session.js";
import { InputParking } from "./input-parking.js";
import { ListenStreams, listChangedMethods } from "./listen-streams.js";
import { servedExtensions, serverCapabilities } from "./methods/discover.js";
import type { GatewayIdentity } from "./methods/method-handler.js";
import { route } from "./methods/method-handlers.js";
import { RevisionResults, rev2025Result } from "./revision-results.js";

/** Options of a {@link Gateway}. */
export interface GatewayOptions {
  /** Name and version the gateway reports; instructions for the model. */
  identity?: Partial<GatewayIdentity>;
  /** How long a call waiting for a 2026 client's input is kept (ms). Default 10 minutes. */
  inputWaitMs?: number;
  /**
   * Settles when the hub's first start is over. Requests wait for it, but at most
   * {@link readyWait}: a client's first `tools/list` sees every server that starts quickly,
   * and one slow server never hides the others (they are announced when they are ready).
   */
  ready?: Promise<unknown>;
  /** How long requests wait for {@link ready} at most (ms). Default 1000. */
  readyWait?: number;
  /**
   * Layers on the path of this gateway's clients' requests only, the first one outermost,
   * inside the hub's (`HubOptions.interceptors`, which see every call whoever makes it): see
   * {@link Interceptor}. More can be added with {@link Gateway.use}.
   */
  interceptors?: readonly Interceptor[];
  /**
   * Layers outside all others, the hub's included, the first one outermost: they see each
   * request of this gateway's clients as it came, and how it ended whichever layer answered or
   * refused it (telemetry's SERVER span, then the audit trail, in `serve()`). Fixed for the
   * gateway's life.
   */
  outer?: readonly Interceptor[];
  /**
   * The catalog view of each caller (`search` and `code` mode; see `viewResolver`): absent, or
   * answering `undefined`, serves every tool as it is.
   */
  views?: ViewOf;
  /**
   * Tools of `available:` servers that do not run but that a caller may start
   * (`connect_server`), which `search_tools` finds too (see `availableToolEntries`).
   */
  availableTools?: (profile: string | undefined) => Promise<readonly CatalogTool[]>;
  /** Bounds of the cache of tool results (servers opt in with `cache:`). */
  cache?: ResultCacheOptions;
  /**
   * One replica of several: the keys its 2026 request states and its task handles are signed
   * with (the same on every replica) and its id, named in both so a request that lands elsewhere
   * comes back here.
   */
  replica?: { id: string; stateKey: Buffer; taskKey?: Buffer };
  /**
   * Methods to serve beside the standard ones, one row each (see {@link MethodTable}): a
   * forwarded row is sent to the server its target names, with no other code.
   *
   * @example
   * new Gateway(hub, { methods: [{ method: "acme/search", target: "tool", forwarded: true }] });
   */
  methods?: readonly MethodRowInput[];
}

/** Default of {@link GatewayOptions.readyWait}: clients give a first list a few seconds. */
export const DEFAULT_READY_WAIT_MS = 1000;

/**
 * The catalog of a hub served as one MCP server: sessions of 2025 clients,
 * stateless requests and `subscriptions/listen` streams of 2026 clients, and the
 * hub's changes delivered to whoever asked for them. Fronts (stdio, HTTP,
 * WebSocket) only move messages.
 */
export class Gateway {
  readonly hub: Hub;
  /** The hub's catalog, kept: read for every request's target (the hub never replaces it). */
  readonly #catalog: Catalog;
  /** Calls of 2026 clients parked while their 2025 server waits for the client's input. */
  readonly parking: InputParking;
  /** Results of read-only tools of servers configured with `cache:`, reused for a while. */
  readonly cache: ResultCache;
  /** The methods this gateway knows, one row each. */
  readonly methods: MethodTable;
  /** Tasks of the servers behind it: their ids as handles that name the server, and back. */
  readonly tasks: GatewayTasks;
  /**
   * Settles when requests may be served: when the hub's first start is over, or
   * {@link GatewayOptions.readyWait} after the gateway was made, whichever comes first.
   */
  readonly ready: Promise<unknown>;
  /** `true` once {@link ready} has settled (saves an await per request after that). */
  isReady = false;
  readonly #identity: GatewayIdentity;
  /** Results as each revision's clients get them, with this gateway's `serverInfo`. */
  readonly #results: RevisionResults;
  readonly #sessions = new Set<ClientSession>();
  readonly #listens: ListenStreams;
  readonly #offHub: () => void;
  readonly #logRelay = new LogRelay();
  /**
   * The hub's pipeline as this gateway extends it: the outer layers, the hub's interceptors,
   * the gateway's own (the embedder's, the metrics, the dashboard), its layers, the route.
   */
  readonly #pipeline: PipelineExtension;
  readonly #viewOf: ViewOf | undefined;
  /** Tools that interceptors answer themselves (see {@link use}). */
  readonly #answered = new Set<string>();

  constructor(hub: Hub, options: GatewayOptions = {}) {
    this.hub = hub;
    this.#catalog = hub.catalog;
    this.methods = new MethodTable(options.methods);
    this.#identity = { name: "mcplex", version: "0.1.0", ...options.identity };
    this.#results = new RevisionResults(this.#identity);
    const replica = options.replica;
    this.tasks = new GatewayTasks(
      hub,
      replica === undefined
        ? {}
        : { replica: replica.id, ...(replica.taskKey === undefined ? {} : { key: replica.taskKey }) },
    );
    this.#listens = new ListenStreams(hub, this.tasks);
    this.parking = new InputParking({
      ...(options.inputWaitMs === undefined ? {} : { parkMs: options.inputWaitMs }),
      ...(options.replica === undefined
        ? {}
        : { key: options.replica.stateKey, replica: options.replica.id }),
    });
    this.#viewOf = options.views;
    this.cache = new ResultCache(hub, options.cache);
    const layers = [
      // A composite's inner calls run from the top, through every layer, as the caller's own.
      compositeCalls(
        hub,
        (id, method, params, context) => this.#request(id, method, params, context, false),
        (request) => this.#run(request),
      ),
      this.cache.interceptor,
      this.#logRelay.interceptor,
      clientInput(this.parking),
    ];
    if (this.#viewOf !== undefined)
      layers.unshift(
        catalogViews(
          hub,
          this.#viewOf,
          // A meta-tool reads what its calls answer: never a result kept as text.
          (id, method, params, context) => this.#request(id, method, params, context, false),
          (request) => this.#run(request),
          options.availableTools,
        ),
      );
    this.#pipeline = hub.extend({
      outer: options.outer ?? [],
      interceptors: options.interceptors ?? [],
      inner: layers,
      end: (dispatch) => route(hub, this.#identity, this.tasks, dispatch),
    });
    this.#offHub = hub.on((event) => this.#onHubEvent(event));
    const started = (options.ready ?? Promise.resolve()).catch(() => {});
    const waitMs = options.readyWait ?? DEFAULT_READY_WAIT_MS;
    this.ready = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      timer.unref();
      void started.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    void this.ready.then(() => {
      this.isReady = true;
    });
  }

  /** Name, version and instructions the gateway reports. */
  get identity(): Readonly<GatewayIdentity> {
    return this.#identity;
  }

  /**
   * Adds an interceptor on this gateway's clients' requests, inside those added before it
   * (outside the gateway's own layers); `hub.use` adds one that sees every call.
   * The pipeline is composed again here, not per request. `answers` names the tools it answers
   * itself: a call of one of them never waits for servers still starting. Returns the function
   * that removes it.
   */
  use(interceptor: Interceptor, options: { answers?: readonly string[] } = {}): () => void {
    const answers = options.answers ?? [];
    for (const name of answers) this.#answered.add(name);
    const remove = this.#pipeline.use(interceptor);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      remove();
      for (const name of answers) this.#answered.delete(name);
    };
  }

  /** Receives one sample per request handled (an interceptor); returns the unsubscribe function. */
  observe(observer: (sample: RequestSample) => void): () => void {
    return this.use(observing(observer));
  }

  /**
   * Sees every forwarded request start and end (an interceptor outside the hub's, so a call a
   * policy, a guardrail or a quota refused is seen too, with the decisions taken on it);
   * returns the unsubscribe function.
   */
  watchCalls(watcher: CallWatcher): () => void {
    return this.#pipeline.useOuter(watching(watcher, (text) => this.hub.redact(text)));
  }

  /**
   * The request object of the pipeline, made by every front alike: what it names looked up in
   * the caller's view of the catalog, and the options its hub call will carry.
   */
  request(
    id: string | number,
    method: string,
    params: JsonObject | undefined,
    context: RequestContext,
  ): CallRequest {
    return this.#request(id, method, params, context, this.#pipeline.rawResults);
  }

  /**
   * {@link request}, with `rawResult` as given: a front writes what {@link handle} answers (a
   * `RawJson` result as its text), a meta-tool's inner call reads it.
   */
  #request(
    id: string | number,
    method: string,
    params: JsonObject | undefined,
    context: RequestContext,
    rawResult: boolean,
  ): CallRequest {
    const p = params ?? {};
    const row = this.methods.get(method);
    return {
      id,
      method,
      params: p,
      context,
      target: resolveTarget(this.#catalog, row, p, context, this.tasks),
      row,
      callOptions:
        row?.forwarded === true ? callOptionsOf(context, p, rawResult) : { signal: context.signal },
    };
  }

  /**
   * Answers a request: waits for the first start (at most `readyWait`), refuses methods of the
   * other revision, waits for the server of a tool the catalog does not know yet, runs the
   * pipeline, and shapes the result for the client's revision. Throws `RpcError` for wire errors.
   * The result may be a `RawJson` (a front writes its text; see `CallOptions.rawResult`).
   */
  async handle(request: CallRequest): Promise<JsonObject> {
    let current = request;
    if (!this.isReady) {
      await this.ready;
      current = this.request(request.id, request.method, request.params, request.context);
    }
    const { method, context, row } = current;
    // The row the request was built with: no second lookup of the method.
    if (row !== undefined && !row.revisions.includes(context.stateless ? "2026" : "2025")) {
      throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
    const result = await this.#run(current);
    return context.stateless
      ? this.#results.rev2026(result, current.row?.cacheable === true)
      : rev2025Result(result);
  }

  /**
   * Runs the pipeline, first waiting for the server of a tool the catalog does not know yet.
   * Not async: a request whose target is known goes straight into the pipeline.
   */
  #run(request: CallRequest): Promise<JsonObject> {
    const { target } = request;
    if (target?.kind === "tool" && target.tool === undefined) return this.#runUnknownTool(request, target);
    return this.#pipeline.handle(this.#rawChecked(request));
  }

  /** `request`, or a copy that asks for a parsed result if an interceptor came since it was made. */
  #rawChecked(request: CallRequest): CallRequest {
    if (request.callOptions.rawResult !== true || this.#pipeline.rawResults) return request;
    return { ...request, callOptions: { ...request.callOptions, rawResult: false } };
  }

  async #runUnknownTool(
    request: CallRequest,
    target: Extract<RequestTarget, { kind: "tool" }>,
  ): Promise<JsonObject> {
    let current = request;
    const { context } = current;
    if (!this.#answered.has(target.name) && this.#viewOf?.(context)?.handles(target.name) !== true) {
      // A tool whose server is still starting is waited for, not refused as unknown.
      const { profile, signal } = context;
      // The caller's user: a per-user server not listed yet opens that user's connection.
      const { user } = current.callOptions;
      let tool: CatalogTool | undefined;
      try {
        // The catalog had no such tool when the request's target was resolved: not asked again.
        tool = await this.hub.waitForTool(target.name, {
          signal,
          ...(profile === undefined ? {} : { profile }),
          ...(user === undefined ? {} : { user }),
        });
      } catch (error) {
        // A per-user server that could not open this caller's connection (sign in, connect
        // first): the call goes on through the layers, which answer with why (a connect prompt).
        if (!(error instanceof McplexError) || signal.aborted) throw error;
        current = { ...current, target: { ...target, unreachable: error } };
      }
      if (tool !== undefined) {
        current = { ...current, target: { ...target, server: tool.server, tool } };
      }
    }
    return this.#pipeline.handle(this.#rawChecked(current));
  }

  /** Sessions open now. */
  get sessions(): ReadonlySet<ClientSession> {
    return this.#sessions;
  }

  /** Open `subscriptions/listen` streams. */
  get listenerCount(): number {
    return this.#listens.size;
  }

  /** Starts a session on a channel (a stdio pipe, a WebSocket, an HTTP session). */
  openSession(channel: Channel, options: SessionOptions = {}): ClientSession {
    const session = new ClientSession(this, channel, options);
    this.#sessions.add(session);
    return session;
  }

  /** @internal Called by a session when it ends. */
  sessionClosed(session: ClientSession): void {
    this.#sessions.delete(session);
    void this.hub.releaseClient(session).catch(() => {});
    for (const uri of session.subscriptions) {
      void this.hub
        .unsubscribeResource(uri, session.profile === undefined ? {} : { profile: session.profile })
        .catch(() => {});
    }
  }

  /**
   * The `initialize` result for a 2025 client; a 2025-11-25 one hears of the experimental tasks
   * when a server `profile` reaches takes them.
   */
  initializeResult(protocolVersion: string, profile?: string): Record<string, unknown> {
    const capabilities = serverCapabilities(false, servedExtensions(this.#catalog, profile));
    if (protocolVersion === "2025-11-25" && this.tasks.takesRev2025(profile))
      capabilities.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities,
      serverInfo: { name: this.#identity.name, version: this.#identity.version },
    };
    if (this.#identity.instructions !== undefined) result.instructions = this.#identity.instructions;
    return result;
  }

  /**
   * Serves a 2026 `subscriptions/listen`: acknowledges what it will honour, then
   * sends the matching notifications tagged with the listen's id until the request
   * is cancelled (its signal aborts). Resolves when the listen ends.
   */
  listen(
    id: string | number,
    params: Record<string, unknown>,
    ctx: RequestContext,
    send: (method: string, params: Record<string, unknown>) => void,
  ): Promise<void> {
    return this.#listens.listen(id, params, ctx, send);
  }

  #onHubEvent(event: HubEvent): void {
    switch (event.type) {
      case "catalog-changed":
        this.#listChanged(event.kinds, event.user);
        return;
      case "resource-updated":
        this.#resourceUpdated(event.uri);
        return;
      case "notification":
        if (event.method === "notifications/message" && event.params !== undefined) {
          this.#logRelay.relay(event.server, event.params);
        } else if (event.method === "notifications/tasks" && event.params !== undefined) {
          this.#listens.taskChanged(event.server, event.params);
        } else if (
          event.method === "notifications/subscriptions/acknowledged" &&
          event.params !== undefined
        ) {
          this.#listens.acknowledged(event.server, event.params);
        }
        return;
      default:
        return;
    }
  }

  /**
   * Tells every client that lists of `kinds` changed (`list_changed` to 2025 sessions, the
   * listen streams of 2026 clients): for changes the hub does not see, such as a new mode.
   */
  announce(kinds: ListKind[]): void {
    this.#listChanged(kinds);
  }

  /** With `user` (a per-user server's list of that user's changed), to that user's sessions only. */
  #listChanged(kinds: ListKind[], user?: string): void {
    for (const [, method] of listChangedMethods(kinds)) {
      for (const session of this.#sessions)
        if (session.initialized && (user === undefined || userRefOf(session.identity)?.key === user))
          session.notify(method, {});
    }
    this.#listens.listChanged(kinds, user);
  }

  #resourceUpdated(uri: string): void {
    for (const session of this.#sessions) {
      if (session.subscriptions.has(uri)) session.notify("notifications/resources/updated", { uri });
    }
    this.#listens.resourceUpdated(uri);
  }

  /** Ends every session and listen; parked calls are cancelled. The hub stays open. */
  close(): void {
    this.#offHub();
    this.cache.close();
    for (const session of [...this.#sessions]) session.close();
    this.parking.close();
  }
}
