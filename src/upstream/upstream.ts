import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.js";
import { McplexError, RpcError, type UpstreamUnavailableError } from "../errors.js";
import { deadlineSignal } from "../protocol/deadline-signal.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { LIST_CHANGED, type ListKind } from "../protocol/list-changes.js";
import { paramHeaders } from "../protocol/param-headers.js";
import { type Implementation, META } from "../protocol/rev2026.js";
import type { RpcRequestOptions } from "../protocol/rpc-connection.js";
import { ANSWERING_CAPABILITIES, SERVER_REQUEST_CAPABILITIES } from "../protocol/server-requests.js";
import { Backoff } from "./backoff.js";
import { ChangeFeed } from "./change-feed.js";
import { type Connected, connect } from "./connect.js";
import { LIST_KINDS, ServerLists } from "./server-lists.js";
import { redacted, unavailable } from "./upstream-errors.js";
import { UpstreamStats } from "./upstream-stats.js";
import type {
  UpstreamEvent,
  UpstreamOptions,
  UpstreamRequestOptions,
  UpstreamState,
} from "./upstream-types.js";

/** What a connection declares with no handler of server requests: one object, never changed. */
const NO_CAPABILITIES: Record<string, unknown> = Object.freeze({});

/**
 * One server connection: connects, negotiates, reconnects with backoff after a crash, sends
 * requests, and answers for itself only (it knows nothing of other servers). The server's
 * lists are mirrored by its {@link ServerLists}, which it tells when to fetch.
 */
export class Upstream {
  readonly config: ServerConfig;
  readonly stats: UpstreamStats;

  readonly #options: UpstreamOptions;
  readonly #backoff: Backoff;
  readonly #lists: ServerLists;
  #state: UpstreamState;
  #error: McplexError | undefined;
  #retryAt: number | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #breakerOpenUntil: number | undefined;
  /** Whether the current connection has answered a call: a server that serves is healthy. */
  #served = false;
  #connected: Connected | undefined;
  #connectedAt = 0;
  #starting: Promise<void> | undefined;
  #abort: AbortController | undefined;
  readonly #changes: ChangeFeed;
  /** Calls in flight (and waiting for a start): an idle stop waits for none. */
  #inFlight = 0;
  #idleTimer: NodeJS.Timeout | undefined;
  /** An idle stop closing the connection; a call that comes meanwhile waits for it, then starts again. */
  #stopping: Promise<void> | undefined;
  /** Stopped for idleness, lists kept: still offered, started again by the next call. */
  #resting = false;
  #starts = 0;
  #idleStops = 0;

  constructor(config: ServerConfig, options: UpstreamOptions) {
    this.config = config;
    this.#options = options;
    this.#backoff = new Backoff({
      ...options.backoff,
      ...config.backoff,
      ...(config.breaker?.failures === undefined ? {} : { breakerFailures: config.breaker.failures }),
      ...(config.breaker?.openFor === undefined ? {} : { breakerOpenFor: config.breaker.openFor }),
    });
    this.stats = new UpstreamStats(options.slowMs);
    this.#changes = new ChangeFeed(config.timeout);
    this.#lists = new ServerLists({ timeout: config.timeout, onEvent: (event) => options.onEvent(event) });
    this.#state = config.lazy ? "idle" : "stopped";
  }

  get name(): string {
    return this.config.name;
  }
  /** The server's tools as last listed (kept while stopped for idleness). */
  get tools(): Tool[] {
    return this.#lists.tools;
  }
  get resources(): Resource[] {
    return this.#lists.resources;
  }
  get resourceTemplates(): ResourceTemplate[] {
    return this.#lists.resourceTemplates;
  }
  get prompts(): Prompt[] {
    return this.#lists.prompts;
  }
  /** When the lists were last fetched (epoch ms). */
  get listedAt(): number {
    return this.#lists.listedAt;
  }
  /** How long the server said its lists stay fresh (2026 `ttlMs`). */
  get ttlMs(): number | undefined {
    return this.#lists.ttlMs;
  }
  get state(): UpstreamState {
    return this.#state;
  }
  get error(): McplexError | undefined {
    return this.#error;
  }
  /** When the next reconnect attempt is due (epoch ms), while failed or reconnecting. */
  get retryAt(): number | undefined {
    return this.#retryAt;
  }
  /** While the breaker is open (too many failures in a row): when it closes (epoch ms). */
  get breakerOpenUntil(): number | undefined {
    return this.#breakerOpenUntil;
  }
  get protocolVersion(): string | undefined {
    return this.#connected?.negotiated.protocolVersion;
  }
  get serverInfo(): Implementation | undefined {
    return this.#connected?.negotiated.serverInfo;
  }
  get capabilities(): Record<string, unknown> | undefined {
    return this.#connected?.negotiated.capabilities;
  }
  /**
   * Whether the connection speaks a 2025 revision: its client capabilities were given once, at
   * `initialize`, and requests carry none (`false` while not connected: it may be 2026).
   */
  get rev2025(): boolean {
    return this.#connected !== undefined && !this.#connected.negotiated.stateless;
  }
  get instructions(): string | undefined {
    return this.#connected?.negotiated.instructions;
  }
  /** The transport in use (`sse` after a Streamable HTTP fallback, `streamable-http` after a WebSocket one). */
  get transport(): ServerConfig["transport"] {
    return this.#connected?.transport ?? this.config.transport;
  }
  /** Why {@link transport} is not the configured one (a WebSocket upgrade refused), while connected. */
  get fallbackReason(): string | undefined {
    return this.#connected?.fallbackReason;
  }
  /**
   * Whether its tools can be called: ready, or stopped for idleness (`idleTimeout`) with its
   * lists kept, in which case the next call starts it again.
   */
  get available(): boolean {
    return (
      this.#state === "ready" || (this.#resting && (this.#state === "idle" || this.#state === "starting"))
    );
  }
  /** Connections made (the first start, restarts after an idle stop, reconnects). */
  get starts(): number {
    return this.#starts;
  }
  /** Times it was stopped after `idleTimeout` without a call. */
  get idleStops(): number {
    return this.#idleStops;
  }
  get pid(): number | undefined {
    return this.#connected?.pid;
  }

  /**
   * Connects (if not connected) and resolves when ready; rejects with the start
   * error. Concurrent calls share one attempt.
   */
  start(): Promise<void> {
    if (this.#state === "ready") return Promise.resolve();
    this.#starting ??= this.#attempt().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #attempt(): Promise<void> {
    clearTimeout(this.#retryTimer);
    this.#retryAt = undefined;
    this.#breakerOpenUntil = undefined;
    const wasReconnecting = this.#state === "reconnecting";
    if (!wasReconnecting) this.#setState("starting");
    this.#abort = new AbortController();
    const deadline = deadlineSignal(this.config.startTimeout, this.#abort.signal);
    const signal = deadline.signal;
    let connected: Connected | undefined;
    try {
      connected = await connect(this.config, {
        clientInfo: this.#options.clientInfo,
        capabilities: this.#capabilities(),
        onRequest: (method, params, context) => this.#onServerRequest(method, params ?? {}, context.signal),
        onNotification: (method, params) => this.#onNotification(method, params),
        onClose: (error) => this.#onClose(connected, error),
        signal,
        ...(this.#options.protocolVersion === undefined
          ? {}
          : { protocolVersion: this.#options.protocolVersion }),
        ...(this.#options.oauth === undefined ? {} : { oauth: this.#options.oauth }),
        ...(this.#options.bearer === undefined ? {} : { bearer: this.#options.bearer }),
      });
      this.#connected = connected;
      await this.#lists.fetch(connected, LIST_KINDS, signal);
      await this.#changes.attach(connected.connection, connected.negotiated, signal);
    } catch (error) {
      if (connected !== undefined) {
        this.#connected = undefined;
        await connected.connection.close().catch(() => {});
      }
      this.#resting = false;
      if (this.#state === "stopped") throw this.#stoppedError();
      const failure =
        error instanceof McplexError
          ? error
          : new McplexError(
              "UPSTREAM_START_FAILED",
              `${this.name}: failed to start: ${(error as Error).message}`,
              { server: this.name, retryable: true },
              { cause: error },
            );
      this.#error = redacted(failure, this.name, this.#options.redact);
      this.#scheduleRetry(failure.retryable, wasReconnecting ? "reconnecting" : "failed");
      throw this.#error;
    } finally {
      deadline.clear();
    }
    this.#error = undefined;
    this.#connectedAt = Date.now();
    this.#served = false;
    this.#resting = false;
    this.#starts++;
    this.#setState("ready");
    this.#armIdle();
  }

  /** With `idleTimeout`: stop after that long without a call (none in flight). */
  #armIdle(): void {
    const ms = this.config.idleTimeout;
    clearTimeout(this.#idleTimer);
    if (ms === undefined || this.#inFlight > 0 || this.#state !== "ready") return;
    this.#idleTimer = setTimeout(() => void this.#idleStop(), ms);
    this.#idleTimer.unref();
  }

  /**
   * Ends the connection (a stdio server's process exits) but keeps the lists, so the catalog
   * goes on offering the tools; `idle` is reported once the connection is closed.
   */
  async #idleStop(): Promise<void> {
    const connected = this.#connected;
    if (this.#state !== "ready" || this.#inFlight > 0 || connected === undefined) return;
    this.#connected = undefined;
    this.#changes.detach();
    this.#resting = true;
    this.#stopping = connected.connection.close().catch(() => {
      // Closing is best effort: the process is signalled in stages whatever it answers.
    });
    await this.#stopping;
    this.#stopping = undefined;
    if (this.#state !== "ready") return; // closed meanwhile
    this.#idleStops++;
    this.#setState("idle");
  }

  /**
   * The client capabilities this connection declares when a request brings none of its own (the
   * hub's, or what its handler of server requests can answer).
   */
  get declaredCapabilities(): Record<string, unknown> {
    return this.#capabilities();
  }

  #capabilities(): Record<string, unknown> {
    if (this.#options.clientCapabilities !== undefined) return this.#options.clientCapabilities;
    const handler = this.#options.onServerRequest?.();
    // Only advertise what someone can answer: servers then never ask in vain.
    return handler === undefined ? NO_CAPABILITIES : ANSWERING_CAPABILITIES;
  }

  /**
   * Sends one request. Lazy servers start on first use; an unavailable server
   * fails fast with an error naming it and the next retry.
   */
  async request<T = Record<string, unknown>>(
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<T> {
    // One async function on the way, not two: each is a promise and a microtask turn per call.
    this.#inFlight++;
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    let startedAt: number | undefined;
    let failed = true;
    try {
      if (this.#stopping !== undefined) await this.#stopping;
      if (this.#state !== "ready") {
        if (this.#state === "idle" || (this.#state === "stopped" && this.config.lazy)) await this.start();
        else throw this.unavailableError();
      }
      const connection = this.#connected!.connection;
      startedAt = this.stats.begin();
      const result = await connection.request<T>(
        method,
        params,
        this.#requestOptions(method, params, options),
      );
      failed = false;
      if (!this.#served && connection === this.#connected?.connection) {
        // A server killed every few seconds that answers in between is worth reconnecting
        // to at once each time, not after a run of doubling delays and the breaker.
        this.#served = true;
        this.#backoff.reset();
      }
      return result;
    } finally {
      if (startedAt !== undefined) {
        const ms = this.stats.end(startedAt, failed);
        if (ms >= this.stats.slowMs) {
          const name = typeof params?.name === "string" ? params.name : undefined;
          this.#options.onEvent({ type: "slow-call", method, ms, ...(name === undefined ? {} : { name }) });
        }
      }
      this.#inFlight--;
      if (this.config.idleTimeout !== undefined) this.#armIdle();
    }
  }

  /** The connection's options of one request: timeout, signal, progress, 2026 envelope, headers. */
  #requestOptions(
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions,
  ): RpcRequestOptions {
    // `x-mcp-header` annotations are kept over 2026 Streamable HTTP only: stdio has none.
    const annotated =
      method === "tools/call" && this.config.transport !== "stdio"
        ? this.#lists.paramHeaders(String(params?.name))
        : undefined;
    const requestOptions: RpcRequestOptions = {
      timeout: options.timeout ?? this.config.timeout,
      signal: options.signal,
      onProgress: options.onProgress,
      rawResult: options.rawResult,
    };
    if (annotated !== undefined) requestOptions.headers = paramHeaders(annotated, params?.arguments);
    if (this.#connected!.negotiated.stateless) {
      if (options.clientCapabilities !== undefined || options.logLevel !== undefined)
        requestOptions.meta = {};
      if (options.clientCapabilities !== undefined)
        requestOptions.meta![META.clientCapabilities] = options.clientCapabilities;
      if (options.logLevel !== undefined) requestOptions.meta![META.logLevel] = options.logLevel;
    }
    return requestOptions;
  }

  /** The error a call gets while this server is not ready. */
  unavailableError(): UpstreamUnavailableError {
    return unavailable(this.name, this.#state, this.#error, this.#retryAt);
  }

  /** Re-lists now (used on `list_changed` and when a list's `ttlMs` has passed). */
  refresh(kinds: readonly ListKind[] = LIST_KINDS): Promise<void> {
    const connected = this.#connected;
    if (this.#state !== "ready" || connected === undefined) return Promise.resolve();
    return this.#lists.fetch(connected, kinds).catch(() => {
      // A failed refresh keeps the previous lists; the connection's own errors surface elsewhere.
    });
  }

  /**
   * Re-lists in the background if the lists are past their freshness (see
   * {@link ServerLists.refreshIfStale}). One refresh at a time.
   */
  refreshIfStale(now = Date.now()): void {
    if (this.#state !== "ready") return;
    this.#lists.refreshIfStale(now, this.capabilities, () => this.refresh());
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined): void {
    const changed = LIST_CHANGED[method];
    if (changed !== undefined) void this.refresh(changed);
    else if (method === "notifications/resources/updated" && typeof params?.uri === "string") {
      this.#options.onEvent({ type: "resource-updated", uri: params.uri });
    } else
      this.#options.onEvent({ type: "notification", method, ...(params === undefined ? {} : { params }) });
  }

  async #onServerRequest(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<unknown> {
    if (!SERVER_REQUEST_CAPABILITIES.has(method)) {
      throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
    }
    const handler = this.#options.onServerRequest?.();
    if (handler === undefined) {
      throw new RpcError(
        ErrorCode.MethodNotFound,
        `mcplex: ${method} declined: this client has no handler for server requests (give the hub an onServerRequest handler)`,
      );
    }
    return handler({ server: this.name, method, params, signal });
  }

  #onClose(connected: Connected | undefined, error?: Error): void {
    if (connected === undefined || this.#connected !== connected) return;
    this.#connected = undefined;
    clearTimeout(this.#idleTimer);
    this.#changes.detach();
    if (this.#state === "stopped") return;
    this.#backoff.connectionEnded(Date.now() - this.#connectedAt);
    const reason =
      error instanceof McplexError
        ? error
        : new McplexError(
            "UPSTREAM_CLOSED",
            `${this.name}: connection closed${error ? `: ${error.message}` : ""}`,
            {
              server: this.name,
              retryable: true,
            },
          );
    const tail = connected.stderr.text();
    this.#error = redacted(
      tail === ""
        ? reason
        : new McplexError("UPSTREAM_CLOSED", `${reason.message}\n--- stderr ---\n${tail}`, {
            server: this.name,
            retryable: true,
          }),
      this.name,
      this.#options.redact,
    );
    this.#scheduleRetry(true, "reconnecting");
  }

  #scheduleRetry(retryable: boolean, state: UpstreamState): void {
    if (!retryable) {
      this.#retryAt = undefined;
      this.#breakerOpenUntil = undefined;
      this.#setState("failed");
      return;
    }
    const { delay, breakerOpen } = this.#backoff.failed();
    this.#retryAt = Date.now() + delay;
    this.#breakerOpenUntil = breakerOpen ? this.#retryAt : undefined;
    this.#setState(state);
    this.#retryTimer = setTimeout(() => {
      this.start().catch(() => {
        // The failure is recorded in state and error; the next retry is scheduled.
      });
    }, delay);
    this.#retryTimer.unref();
  }

  #setState(state: UpstreamState): void {
    const previous = this.#state;
    if (previous === state && state !== "reconnecting" && state !== "failed") return;
    this.#state = state;
    const event: UpstreamEvent = { type: "state", state, previous };
    if (this.#error !== undefined && state !== "ready") event.error = this.#error.message;
    if (this.#retryAt !== undefined) event.retryAt = this.#retryAt;
    this.#options.onEvent(event);
  }

  #stoppedError(): McplexError {
    return new McplexError("UPSTREAM_CLOSED", `${this.name}: stopped`, { server: this.name });
  }

  /**
   * Asks to hear about changes of a resource (`resource-updated` events): 2025
   * `resources/subscribe`, or the 2026 listen's `resourceSubscriptions`. Kept across
   * reconnects. Does nothing for servers that do not offer subscriptions.
   */
  watchResource(uri: string, signal?: AbortSignal): Promise<void> {
    return this.#changes.watch(uri, signal);
  }

  /** Stops hearing about a resource. */
  unwatchResource(uri: string): Promise<void> {
    return this.#changes.unwatch(uri);
  }

  /**
   * Sends a notification to a 2025 server (a stateless 2026 server takes none outside its
   * requests). Does nothing while not ready: a server that connects later starts afresh.
   */
  notify(method: string, params?: Record<string, unknown>): void {
    const connected = this.#connected;
    if (this.#state !== "ready" || connected === undefined || connected.negotiated.stateless) return;
    connected.connection.notify(method, params).catch(() => {
      // A closing connection: the reconnect starts the server afresh.
    });
  }

  /** Stops the server (child processes in stages); safe to call twice. */
  async close(): Promise<void> {
    this.#changes.detach();
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#idleTimer);
    this.#resting = false;
    this.#retryAt = undefined;
    this.#breakerOpenUntil = undefined;
    const connected = this.#connected;
    this.#connected = undefined;
    if (this.#state !== "stopped") this.#setState("stopped");
    this.#abort?.abort(this.#stoppedError());
    await connected?.connection.close();
  }
}

export type {
  UpstreamEvent,
  UpstreamOptions,
  UpstreamRequestOptions,
  UpstreamState,
} from "./upstream-types.js";
