import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import { RpcError } from "../errors.js";
import type { CallRequest, FrontKind, Identity, RequestContext } from "../hub/call-pipeline.js";
import { ControllerPool } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";
import {
  readMessage,
  type WireNotification,
  type WireRequest,
  type WireResponse,
} from "../protocol/messages.js";
import { REV2025_PROTOCOL_VERSIONS } from "../protocol/rev2025.js";
import { envelopeVersion, readEnvelope } from "../protocol/rev2026.js";
import { toWireError } from "../protocol/wire-error.js";
import { statelessContext } from "./call-request.js";
import { resultForRev2024 } from "./rev2024-result.js";

/** A JSON-RPC message as it travels. */
export type WireMessage = Record<string, unknown>;

/** Where a session's messages go: a stdio pipe, a WebSocket, or an HTTP session's streams. */
export interface Channel {
  /**
   * Sends one message. `related` is the id of the client request the message answers
   * or belongs to (HTTP sends it on that request's stream). Returns `false` when the
   * message could not be delivered (no stream can carry it).
   */
  send(message: WireMessage, related?: string | number): boolean | undefined;
  close(): void;
}

type Id = string | number;

/**
 * What a session needs of the gateway that serves it (the `Gateway` is one): the request
 * pipeline, 2026 listen streams, its `initialize` answer, and word when the session ends.
 */
export interface SessionHost {
  request(
    id: string | number,
    method: string,
    params: Record<string, unknown> | undefined,
    context: RequestContext,
  ): CallRequest;
  handle(request: CallRequest): Promise<Record<string, unknown>>;
  listen(
    id: string | number,
    params: Record<string, unknown>,
    context: RequestContext,
    send: (method: string, params: Record<string, unknown>) => void,
  ): Promise<void>;
  initializeResult(protocolVersion: string, profile?: string): Record<string, unknown>;
  sessionClosed(session: ClientSession): void;
  /** Settles when the servers' first start is over, or soon after (see `Gateway.ready`). */
  readonly ready?: Promise<unknown>;
  readonly isReady?: boolean;
}

/** Who a session serves: its catalog view and mode, and its id on the wire. */
export interface SessionOptions {
  profile?: string | undefined;
  mode?: CatalogMode | undefined;
  caller?: string | undefined;
  /** Who its front admitted (see `RequestContext.identity`). */
  identity?: Identity | undefined;
  id?: string;
  /** The front the session's connection came in on (see `RequestContext.front`). */
  front?: FrontKind | undefined;
}

/**
 * One client connection: a 2025 session after `initialize` (stdio, WebSocket, HTTP with
 * `Mcp-Session-Id`), which may also carry stateless 2026 requests, each with its envelope.
 */
export class ClientSession {
  readonly profile: string | undefined;
  /** The catalog mode its token or its front chose (see {@link RequestContext.mode}). */
  readonly mode: CatalogMode | undefined;
  /** Who it serves (see {@link RequestContext.caller}). */
  readonly caller: string | undefined;
  /**
   * Who its front admitted, when its front authenticates (see `RequestContext.identity`). An
   * HTTP front replaces it when the same caller comes back with a renewed credential (a token
   * refreshed, or signed in again with more scopes): the session's next requests carry that.
   */
  identity: Identity | undefined;
  protocolVersion: string | undefined;
  /** Whether the client said `notifications/initialized`. */
  #saidInitialized = false;
  /** Whether its `initialize` was answered (a client may say `initialized` before it reads that). */
  #answeredInitialize = false;
  clientCapabilities: Record<string, unknown> = {};
  clientInfo: { name?: string; version?: string } = {};
  logLevel: string | undefined;
  /**
   * Whether notifications may go to it: the client said `initialized` and its `initialize` was
   * answered. A client that wrote both at once (a file for standard input) gets no
   * `list_changed` before the answer, which waits for the servers' start.
   */
  get initialized(): boolean {
    return this.#saidInitialized && this.#answeredInitialize;
  }
  /** Resource URIs this 2025 session subscribed to. */
  readonly subscriptions = new Set<string>();

  readonly #gateway: SessionHost;
  readonly #channel: Channel;
  readonly #requests = new Map<Id, AbortController>();
  readonly #asked = new Map<
    string,
    { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }
  >();
  #asks = 0;
  #closed = false;
  readonly #idle: Array<() => void> = [];
  /** Request controllers kept for reuse (see {@link ControllerPool} for the rule that allows it). */
  readonly #controllers = new ControllerPool();

  /** The session's id on the wire, where it has one (`Mcp-Session-Id`, the SSE `sessionId`). */
  readonly id: string | undefined;
  /** The front its connection came in on (see `RequestContext.front`). */
  readonly front: FrontKind | undefined;

  constructor(gateway: SessionHost, channel: Channel, options: SessionOptions = {}) {
    this.#gateway = gateway;
    this.#channel = channel;
    this.profile = options.profile;
    this.mode = options.mode;
    this.caller = options.caller;
    this.identity = options.identity;
    this.id = options.id;
    this.front = options.front;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Handles one parsed message from the client. */
  receive(value: unknown): void {
    if (this.#closed) return;
    const check = readMessage(value);
    switch (check) {
      case "request": {
        const m = value as WireRequest;
        void this.#onRequest(m.id, m.method, m.params);
        return;
      }
      case "notification": {
        const m = value as WireNotification;
        this.#onNotification(m.method, m.params);
        return;
      }
      case "response":
        this.#onResponse(value as WireResponse);
        return;
      case "ignored":
        return;
      default:
        // Sent as the answer to the request it could read (HTTP puts it on that POST).
        this.#send({ jsonrpc: "2.0", id: check.id, error: check.error }, check.id ?? undefined);
    }
  }

  async #onRequest(id: Id, method: string, params: Record<string, unknown> | undefined): Promise<void> {
    if (this.#requests.has(id)) {
      this.#replyError(id, {
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: id ${JSON.stringify(id)} is already in use`,
      });
      return;
    }
    const controller = this.#controllers.take();
    this.#requests.set(id, controller);
    try {
      const stateless = envelopeVersion(params) !== undefined;
      let ctx: RequestContext;
      if (stateless) {
        ctx = statelessContext(readEnvelope(params), {
          signal: controller.signal,
          notify: (m, p) => this.#send({ jsonrpc: "2.0", method: m, params: p }, id),
          profile: this.profile,
          mode: this.mode,
          caller: this.caller,
          identity: this.identity,
          client: this,
          front: this.front,
        });
        if (method === "subscriptions/listen") {
          // Ends when the client cancels it (no answer then) or the session closes.
          await this.#gateway.listen(id, params ?? {}, ctx, (m, p) =>
            this.#send({ jsonrpc: "2.0", method: m, params: p }, id),
          );
          return;
        }
      } else {
        switch (method) {
          case "initialize":
            // The extensions it declares are its servers': a client initializing as the
            // gateway starts waits for them as a first list would (at most `readyWait`).
            if (this.#gateway.isReady === false) await this.#gateway.ready;
            this.#reply(id, this.#initialize(params ?? {}));
            this.#answeredInitialize = true;
            return;
          case "logging/setLevel":
            this.logLevel = String(params?.level ?? "info");
            this.#reply(id, {});
            return;
        }
        ctx = this.#sessionContext(id, controller.signal);
      }
      const result = await this.#gateway.handle(this.#gateway.request(id, method, params, ctx));
      if (stateless) {
        this.#reply(id, result);
        return;
      }
      if (method === "resources/subscribe") this.subscriptions.add(String(params?.uri));
      if (method === "resources/unsubscribe") this.subscriptions.delete(String(params?.uri));
      this.#reply(id, resultForRev2024(ctx.protocolVersion, method, result));
    } catch (error) {
      this.#replyError(id, toWireError(error));
    } finally {
      this.#requests.delete(id);
      this.#controllers.give(controller);
      if (this.#requests.size === 0 && this.#idle.length > 0)
        for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** Resolves when no request of this client is in flight (to finish them before closing). */
  idle(): Promise<void> {
    if (this.#requests.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #initialize(params: Record<string, unknown>): Record<string, unknown> {
    const requested = params.protocolVersion;
    // Answer with the client's version when we speak it, else our newest 2025 one.
    this.protocolVersion =
      typeof requested === "string" && (REV2025_PROTOCOL_VERSIONS as readonly string[]).includes(requested)
        ? requested
        : REV2025_PROTOCOL_VERSIONS[0]!;
    const capabilities = params.capabilities;
    this.clientCapabilities =
      typeof capabilities === "object" && capabilities !== null
        ? (capabilities as Record<string, unknown>)
        : {};
    if (typeof params.clientInfo === "object" && params.clientInfo !== null) {
      this.clientInfo = params.clientInfo as { name?: string; version?: string };
    }
    return this.#gateway.initializeResult(this.protocolVersion, this.profile);
  }

  /** The context of a request of this 2025 session. */
  #sessionContext(id: Id, signal: AbortSignal): RequestContext {
    const ctx: RequestContext = {
      stateless: false,
      protocolVersion: this.protocolVersion ?? "2025-03-26",
      clientCapabilities: this.clientCapabilities,
      signal,
      notify: (method, params) => this.#send({ jsonrpc: "2.0", method, params }, id),
      client: this,
      requestClient: (method, params, requestSignal) => this.#ask(id, method, params, requestSignal),
    };
    if (this.profile !== undefined) ctx.profile = this.profile;
    if (this.mode !== undefined) ctx.mode = this.mode;
    if (this.caller !== undefined) ctx.caller = this.caller;
    if (this.identity !== undefined) ctx.identity = this.identity;
    if (this.logLevel !== undefined) ctx.logLevel = this.logLevel;
    if (this.id !== undefined) ctx.sessionId = this.id;
    if (this.front !== undefined) ctx.front = this.front;
    if (this.clientInfo.name !== undefined) ctx.clientInfo = this.clientInfo;
    return ctx;
  }

  /** Sends a request to the client on behalf of an upstream server; answers with its result. */
  #ask(
    related: Id,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (this.#closed)
      return Promise.reject(new RpcError(ErrorCode.InternalError, "the client has disconnected"));
    const id = `mcplex-${++this.#asks}`;
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#asked.delete(id);
        this.#send(
          {
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: id, reason: "the upstream request ended" },
          },
          related,
        );
        reject(new RpcError(ErrorCode.InternalError, "cancelled"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#asked.set(id, {
        resolve: (r) => {
          signal.removeEventListener("abort", onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      });
      if (this.#channel.send({ jsonrpc: "2.0", id, method, params }, related) === false) {
        this.#asked.delete(id);
        signal.removeEventListener("abort", onAbort);
        reject(
          new RpcError(
            ErrorCode.InternalError,
            `cannot deliver ${method} to the client: its request accepts only application/json and it has no open GET stream`,
          ),
        );
      }
    });
  }

  #onResponse(m: { id: unknown; result?: unknown; error?: unknown }): void {
    const asked = this.#asked.get(String(m.id));
    if (asked === undefined) return;
    this.#asked.delete(String(m.id));
    if (m.error !== undefined) {
      const e = m.error as { code?: unknown; message?: unknown; data?: unknown };
      asked.reject(
        new RpcError(
          typeof e.code === "number" ? e.code : ErrorCode.InternalError,
          String(e.message ?? "client error"),
          e.data,
        ),
      );
    } else {
      asked.resolve((m.result ?? {}) as Record<string, unknown>);
    }
  }

  #onNotification(method: string, params: Record<string, unknown> | undefined): void {
    switch (method) {
      case "notifications/initialized":
        this.#saidInitialized = true;
        return;
      case "notifications/cancelled": {
        const id = params?.requestId as Id | undefined;
        if (id !== undefined) this.#requests.get(id)?.abort(params?.reason ?? "cancelled by the client");
        return;
      }
      default:
        return; // roots/list_changed and others need no answer
    }
  }

  /** Sends a notification that belongs to no request (list changes, resource updates). */
  notify(method: string, params: Record<string, unknown>): void {
    this.#send({ jsonrpc: "2.0", method, params });
  }

  /** Answers request `id` with `result` (built whole, no wrapper: this runs for every answer). */
  #reply(id: Id, result: unknown): void {
    // A request the client cancelled gets no answer.
    if (this.#requests.get(id)?.signal.aborted === true) return;
    this.#send({ jsonrpc: "2.0", id, result }, id);
  }

  #replyError(id: Id, error: unknown): void {
    if (this.#requests.get(id)?.signal.aborted === true) return;
    this.#send({ jsonrpc: "2.0", id, error }, id);
  }

  #send(message: WireMessage, related?: Id): void {
    if (!this.#closed) this.#channel.send(message, related);
  }

  /** Ends the session: requests in flight are cancelled, pending client requests fail. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const controller of this.#requests.values()) controller.abort("the client disconnected");
    for (const asked of this.#asked.values())
      asked.reject(new RpcError(ErrorCode.InternalError, "the client disconnected"));
    this.#asked.clear();
    this.#gateway.sessionClosed(this);
    this.#channel.close();
  }
}
