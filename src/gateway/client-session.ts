import { RpcError } from "../errors.js";
import { ControllerPool } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { REV2025_PROTOCOL_VERSIONS } from "../protocol/rev2025.js";
import { envelopeVersion, readEnvelope } from "../protocol/rev2026.js";
import { toWireError } from "../protocol/wire-error.js";
import type { Gateway } from "./gateway.js";
import type { RequestContext } from "./request-context.js";
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
 * One client connection: a 2025 session after `initialize` (stdio, WebSocket, HTTP with
 * `Mcp-Session-Id`), which may also carry stateless 2026 requests, each with its envelope.
 */
export class ClientSession {
  readonly profile: string | undefined;
  protocolVersion: string | undefined;
  initialized = false;
  clientCapabilities: Record<string, unknown> = {};
  clientInfo: { name?: string; version?: string } = {};
  logLevel: string | undefined;
  /** Resource URIs this 2025 session subscribed to. */
  readonly subscriptions = new Set<string>();

  readonly #gateway: Gateway;
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

  constructor(gateway: Gateway, channel: Channel, options: { profile?: string } = {}) {
    this.#gateway = gateway;
    this.#channel = channel;
    this.profile = options.profile;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Handles one parsed message from the client. */
  receive(message: unknown): void {
    if (this.#closed) return;
    if (Array.isArray(message)) {
      this.#send({
        jsonrpc: "2.0",
        id: null,
        error: { code: ErrorCode.InvalidRequest, message: "Invalid Request: batches are not supported" },
      });
      return;
    }
    if (typeof message !== "object" || message === null || (message as WireMessage).jsonrpc !== "2.0") {
      this.#send({
        jsonrpc: "2.0",
        id: null,
        error: { code: ErrorCode.InvalidRequest, message: "Invalid Request: expected a JSON-RPC 2.0 object" },
      });
      return;
    }
    const m = message as {
      id?: unknown;
      method?: unknown;
      params?: unknown;
      result?: unknown;
      error?: unknown;
    };
    if (typeof m.method !== "string") {
      if (m.id !== undefined && ("result" in m || "error" in m)) this.#onResponse(m);
      else this.#invalid(m.id, "a request needs a method");
      return;
    }
    if (
      m.params !== undefined &&
      (typeof m.params !== "object" || m.params === null || Array.isArray(m.params))
    ) {
      if (m.id !== undefined)
        this.#reply(m.id as Id, {
          error: { code: ErrorCode.InvalidParams, message: "Invalid params: params must be an object" },
        });
      return;
    }
    const params = m.params as Record<string, unknown> | undefined;
    if (m.id === undefined) {
      this.#onNotification(m.method, params);
      return;
    }
    if ((typeof m.id !== "string" && typeof m.id !== "number") || m.id === "") {
      this.#invalid(null, "id must be a string or a number");
      return;
    }
    void this.#onRequest(m.id, m.method, params);
  }

  async #onRequest(id: Id, method: string, params: Record<string, unknown> | undefined): Promise<void> {
    if (this.#requests.has(id)) {
      this.#reply(id, {
        error: {
          code: ErrorCode.InvalidRequest,
          message: `Invalid Request: id ${JSON.stringify(id)} is already in use`,
        },
      });
      return;
    }
    const controller = this.#controllers.take();
    this.#requests.set(id, controller);
    try {
      const modern = envelopeVersion(params) !== undefined;
      if (!modern && method === "initialize") {
        this.#reply(id, { result: this.#initialize(params ?? {}) });
        return;
      }
      let ctx: RequestContext;
      if (modern) {
        const envelope = readEnvelope(params);
        ctx = this.#context(
          id,
          controller.signal,
          true,
          envelope.protocolVersion,
          envelope.clientCapabilities,
        );
        if (envelope.logLevel !== undefined) ctx.logLevel = envelope.logLevel;
        if (method === "subscriptions/listen") {
          // Ends when the client cancels it (no answer then) or the session closes.
          await this.#gateway.listen(id, params ?? {}, ctx, (m, p) =>
            this.#send({ jsonrpc: "2.0", method: m, params: p }, id),
          );
          return;
        }
      } else {
        ctx = this.#context(
          id,
          controller.signal,
          false,
          this.protocolVersion ?? "2025-03-26",
          this.clientCapabilities,
        );
        if (method === "logging/setLevel") {
          this.logLevel = String(params?.level ?? "info");
          this.#reply(id, { result: {} });
          return;
        }
      }
      if (!this.#gateway.isReady) await this.#gateway.ready;
      const result = await this.#gateway.dispatcher.handle(method, params, ctx);
      if (!modern && method === "resources/subscribe") this.subscriptions.add(String(params?.uri));
      if (!modern && method === "resources/unsubscribe") this.subscriptions.delete(String(params?.uri));
      this.#reply(id, { result: modern ? result : resultForRev2024(ctx.protocolVersion, method, result) });
    } catch (error) {
      this.#reply(id, { error: toWireError(error) });
    } finally {
      this.#requests.delete(id);
      this.#controllers.give(controller);
      if (this.#requests.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
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
    return this.#gateway.initializeResult(this.protocolVersion);
  }

  #context(
    id: Id,
    signal: AbortSignal,
    modern: boolean,
    version: string,
    capabilities: Record<string, unknown>,
  ): RequestContext {
    const ctx: RequestContext = {
      modern,
      protocolVersion: version,
      clientCapabilities: capabilities,
      signal,
      notify: (method, params) => this.#send({ jsonrpc: "2.0", method, params }, id),
      client: this,
    };
    if (this.profile !== undefined) ctx.profile = this.profile;
    if (!modern) {
      if (this.logLevel !== undefined) ctx.logLevel = this.logLevel;
      ctx.requestClient = (method, params, requestSignal) => this.#ask(id, method, params, requestSignal);
    }
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

  #onResponse(m: { id?: unknown; result?: unknown; error?: unknown }): void {
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
        this.initialized = true;
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

  #reply(id: Id, body: { result: unknown } | { error: unknown }): void {
    // A request the client cancelled gets no answer.
    if (this.#requests.get(id)?.signal.aborted === true) return;
    // Built member by member, not spread: this runs for every answer.
    this.#send(
      "result" in body
        ? { jsonrpc: "2.0", id, result: body.result }
        : { jsonrpc: "2.0", id, error: body.error },
      id,
    );
  }

  #invalid(id: unknown, why: string): void {
    this.#send({
      jsonrpc: "2.0",
      id: id ?? null,
      error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${why}` },
    });
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
