import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/client";
import { AbortedError, McplexError, RpcError, TimeoutError } from "../errors.js";
import { offAbort, onAbort } from "./controller-pool.js";
import { ErrorCode } from "./error-codes.js";
import { RawJson } from "./raw-json.js";
import { toWireError } from "./wire-error.js";

/** A progress notification's payload, as delivered to `onProgress`. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one outgoing request. */
export interface RpcRequestOptions {
  signal?: AbortSignal;
  /** Milliseconds without an answer (or progress) before the request fails. */
  timeout?: number;
  /** Receives progress notifications; each one also restarts the timeout. */
  onProgress?: (progress: Progress) => void;
  /** Merged into `params._meta` (after the connection's own `_meta`). */
  meta?: Record<string, unknown>;
  /** Extra HTTP headers for this request (2026 `Mcp-Param-*`); transports without headers ignore them. */
  headers?: Record<string, string>;
  /**
   * Resolve with the result as a {@link RawJson} when the transport kept it as text (a result
   * with none but raw members), instead of parsing it: for a caller that relays it.
   */
  rawResult?: boolean;
}

/** Context handed to the handler of a request that the peer sent us. */
export interface IncomingRequestContext {
  signal: AbortSignal;
  /** Sends a notification tied to this request (transports may route it to the request's stream). */
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
}

export type IncomingRequestHandler = (
  method: string,
  params: Record<string, unknown> | undefined,
  context: IncomingRequestContext,
) => Promise<unknown>;

export type NotificationHandler = (method: string, params: Record<string, unknown> | undefined) => void;

/** Options of an {@link RpcConnection}. */
export interface RpcConnectionOptions {
  /** Server name, carried by every error this connection produces. */
  server: string;
  /** Default per-request timeout in ms. */
  timeout: number;
  onRequest?: IncomingRequestHandler;
  onNotification?: NotificationHandler;
  /** Called once when the transport closes, with the reason if it was not a local close. */
  onClose?: (error?: Error) => void;
}

/** What the revision a connection negotiated asks of every request after it (see {@link RpcConnection.negotiated}). */
export interface RequestTerms {
  /** Added to every request's `params._meta` (2026: protocol version, client info, capabilities). */
  meta?: Record<string, unknown>;
  /**
   * `true` when a request is cancelled by closing its own response stream rather than
   * by `notifications/cancelled` (2026 over Streamable HTTP).
   */
  cancelByStream?: boolean;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** Epoch ms after which the request times out (Infinity: never); progress moves it. */
  deadline: number;
  timeout: number;
  /** Closing this stream cancels the request (2026 over Streamable HTTP); else a notification does. */
  stream: AbortController | undefined;
  onProgress: ((progress: Progress) => void) | undefined;
  /** Whether the caller takes a {@link RawJson} result. */
  raw: boolean;
  /** The caller's signal and our listener on it, removed when the request ends. */
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

type Params = Record<string, unknown> | undefined;

/** How often pending requests are checked for timeouts. */
const SWEEP_MS = 25;
/** Ticks without a pending request after which the timeout timer stops (a second). */
const IDLE_SWEEPS = 40;

/**
 * A JSON-RPC 2.0 peer over an SDK `Transport`: request/response correlation,
 * timeouts that progress extends, cancellation sent upstream, and dispatch of the
 * peer's own requests and notifications.
 *
 * This is the hot path of every forwarded call, so it is ours and lean: messages are
 * not re-validated here (the transport parsed them; callers check what they use).
 */
export class RpcConnection {
  readonly #transport: Transport;
  readonly #options: RpcConnectionOptions;
  readonly #pending = new Map<number, Pending>();
  readonly #incoming = new Map<string | number, AbortController>();
  #nextId = 1;
  #sweeper: NodeJS.Timeout | undefined;
  /** Whether {@link #sweeper} holds the process open (it does while requests are pending). */
  #sweeperRef = false;
  /** Ticks of {@link #sweeper} in a row that found no request pending. */
  #idleSweeps = 0;
  #closed = false;
  #closeError: Error | undefined;
  /** Fixed once the revision is negotiated: read by every request, never asked for. */
  #meta: Record<string, unknown> | undefined;
  #cancelByStream = false;

  /**
   * Sets what every request sends from now on, once the revision is negotiated (the requests
   * that negotiate it go without).
   */
  negotiated(terms: RequestTerms): void {
    this.#meta = terms.meta;
    this.#cancelByStream = terms.cancelByStream === true;
  }

  constructor(transport: Transport, options: RpcConnectionOptions) {
    this.#transport = transport;
    this.#options = options;
    transport.onmessage = (message) => this.#onMessage(message);
    transport.onclose = () => this.#onClose();
    transport.onerror = (error) => {
      // Errors are reported out of band; fatal ones are followed by onclose.
      this.#closeError ??= error;
    };
  }

  /** Starts the underlying transport. */
  async start(): Promise<void> {
    await this.#transport.start();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Number of requests waiting for an answer. */
  get inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Sends a request and resolves with its `result`. Rejects with {@link RpcError} for
   * a JSON-RPC error answer, {@link TimeoutError}, {@link AbortedError}, or a closed
   * connection error.
   */
  request<T = unknown>(method: string, params?: Params, options: RpcRequestOptions = {}): Promise<T> {
    const server = this.#options.server;
    if (this.#closed) {
      return Promise.reject(
        new McplexError("UPSTREAM_CLOSED", `${server}: connection is closed`, { server, retryable: true }),
      );
    }
    const signal = options.signal;
    if (signal?.aborted) {
      return Promise.reject(
        new AbortedError(`${server}: ${method} aborted`, { server }, { cause: signal.reason }),
      );
    }
    const id = this.#nextId++;
    const connectionMeta = this.#meta;
    let outParams = params;
    if (connectionMeta !== undefined || options.meta !== undefined || options.onProgress !== undefined) {
      const meta: Record<string, unknown> = {
        ...connectionMeta,
        ...(params?._meta as Record<string, unknown> | undefined),
        ...options.meta,
      };
      if (options.onProgress !== undefined) meta.progressToken = id;
      outParams = { ...params, _meta: meta };
    }
    const message = (
      outParams === undefined
        ? { jsonrpc: "2.0", id, method }
        : { jsonrpc: "2.0", id, method, params: outParams }
    ) as JSONRPCMessage;

    const stream = this.#cancelByStream ? new AbortController() : undefined;
    const sendOptions: TransportSendOptions | undefined =
      options.headers === undefined && stream === undefined
        ? undefined
        : {
            ...(options.headers === undefined ? {} : { headers: options.headers }),
            ...(stream === undefined ? {} : { requestSignal: stream.signal }),
          };

    return new Promise<T>((resolve, reject) => {
      // Data, not closures: this object is made for every call on the hot path.
      const pending: Pending = {
        method,
        resolve: resolve as (value: unknown) => void,
        reject,
        deadline: Number.POSITIVE_INFINITY,
        timeout: options.timeout ?? this.#options.timeout,
        stream,
        onProgress: options.onProgress,
        raw: options.rawResult === true,
        signal,
        onAbort: undefined,
      };
      if (pending.timeout > 0 && Number.isFinite(pending.timeout)) {
        pending.deadline = Date.now() + pending.timeout;
        this.#sweepSoon();
      }
      if (signal !== undefined) {
        pending.onAbort = () => {
          this.#fail(
            id,
            new AbortedError(`${server}: ${method} aborted`, { server }, { cause: signal.reason }),
          );
          const reason = signal.reason instanceof Error ? signal.reason.message : "aborted by the caller";
          this.#cancel(id, reason, stream);
        };
        onAbort(signal, pending.onAbort);
      }
      this.#pending.set(id, pending);
      this.#transport.send(message, sendOptions).catch((error: unknown) => {
        this.#fail(id, toTransportError(error, server, method));
      });
    });
  }

  /** Sends a notification. */
  async notify(method: string, params?: Params): Promise<void> {
    if (this.#closed) return;
    const message = (
      params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params }
    ) as JSONRPCMessage;
    await this.#transport.send(message);
  }

  /** Closes the transport; pending requests fail with a closed-connection error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#transport.close();
    this.#onClose();
  }

  /**
   * Timeouts are checked by one timer for the whole connection rather than a timer per
   * request (a tenth of the gateway's per-call work): it ticks while requests are
   * pending, so a timeout fires at most {@link SWEEP_MS} late. It outlives a quiet moment by
   * {@link IDLE_SWEEPS} ticks (unreferenced meanwhile, so it holds no process open): with
   * calls one after the other, stopping at the first tick that found none pending made a
   * timer again for nearly every call (callgrind: about 2k instructions per stdio call).
   */
  #sweepSoon(): void {
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(this.#sweep, SWEEP_MS);
      this.#sweeperRef = true;
    } else if (!this.#sweeperRef) {
      this.#sweeper.ref();
      this.#sweeperRef = true;
    }
    this.#idleSweeps = 0;
  }

  readonly #sweep = (): void => {
    if (this.#pending.size === 0) {
      if (++this.#idleSweeps >= IDLE_SWEEPS) this.#stopSweeper();
      else if (this.#sweeperRef) {
        this.#sweeper?.unref();
        this.#sweeperRef = false;
      }
      return;
    }
    const now = Date.now();
    const server = this.#options.server;
    for (const [id, pending] of this.#pending) {
      if (now < pending.deadline) continue;
      this.#fail(
        id,
        new TimeoutError(`${server}: ${pending.method} timed out after ${pending.timeout} ms`, { server }),
      );
      this.#cancel(id, "timeout", pending.stream);
    }
  };

  #stopSweeper(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #cancel(id: number, reason: string, stream: AbortController | undefined): void {
    if (this.#closed) return;
    if (stream !== undefined) {
      stream.abort(reason);
      return;
    }
    this.notify("notifications/cancelled", { requestId: id, reason }).catch(() => {});
  }

  #fail(id: number, error: Error): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    if (pending.onAbort !== undefined) offAbort(pending.signal!, pending.onAbort);
    pending.reject(error);
  }

  #onMessage(message: JSONRPCMessage): void {
    const m = message as {
      id?: string | number;
      method?: string;
      params?: Params;
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    if (m.method === undefined) {
      this.#onResponse(m);
      return;
    }
    if (m.id === undefined) {
      this.#onNotification(m.method, m.params);
      return;
    }
    this.#onRequest(m.id, m.method, m.params);
  }

  #onResponse(m: {
    id?: string | number;
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  }) {
    const id = typeof m.id === "number" ? m.id : Number(m.id);
    const pending = this.#pending.get(id);
    if (pending === undefined) return; // late answer to a timed-out or cancelled request
    this.#pending.delete(id);
    if (pending.onAbort !== undefined) offAbort(pending.signal!, pending.onAbort);
    if (m.error !== undefined) {
      const e = m.error;
      pending.reject(
        new RpcError(
          typeof e.code === "number" ? e.code : ErrorCode.InternalError,
          String(e.message),
          e.data,
          this.#options.server,
        ),
      );
    } else {
      const result = m.result;
      pending.resolve(result instanceof RawJson && !pending.raw ? result.value() : result);
    }
  }

  #onNotification(method: string, params: Params): void {
    if (method === "notifications/progress" && params !== undefined) {
      const pending = this.#pending.get(Number(params.progressToken));
      if (pending !== undefined) {
        if (pending.deadline !== Number.POSITIVE_INFINITY) pending.deadline = Date.now() + pending.timeout;
        pending.onProgress?.(params as unknown as Progress);
        return;
      }
    } else if (method === "notifications/cancelled" && params !== undefined) {
      const requestId = params.requestId as string | number;
      this.#incoming.get(requestId)?.abort(params.reason ?? "cancelled by the server");
      return;
    }
    this.#options.onNotification?.(method, params);
  }

  #onRequest(id: string | number, method: string, params: Params): void {
    const respond = (body: { result: unknown } | { error: unknown }) => {
      this.#incoming.delete(id);
      if (this.#closed) return;
      this.#transport
        .send({ jsonrpc: "2.0", id, ...body } as JSONRPCMessage, { relatedRequestId: id })
        .catch(() => {});
    };
    if (method === "ping") {
      respond({ result: {} });
      return;
    }
    const handler = this.#options.onRequest;
    if (handler === undefined) {
      respond({ error: { code: ErrorCode.MethodNotFound, message: `Method not found: ${method}` } });
      return;
    }
    const controller = new AbortController();
    this.#incoming.set(id, controller);
    const context: IncomingRequestContext = {
      signal: controller.signal,
      notify: (m, p) =>
        this.#transport.send(
          (p === undefined
            ? { jsonrpc: "2.0", method: m }
            : { jsonrpc: "2.0", method: m, params: p }) as JSONRPCMessage,
          { relatedRequestId: id },
        ),
    };
    handler(method, params, context).then(
      (result) => respond({ result: result ?? {} }),
      (error: unknown) => respond({ error: toWireError(error) }),
    );
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopSweeper();
    const server = this.#options.server;
    const cause = this.#closeError;
    for (const [id] of this.#pending) {
      const reason = cause === undefined ? "connection closed" : cause.message.replace(`${server}: `, "");
      this.#fail(
        id,
        new McplexError(
          "UPSTREAM_CLOSED",
          `${server}: ${reason} before the answer to ${this.#pending.get(id)?.method} arrived`,
          { server, retryable: true },
          { cause },
        ),
      );
    }
    for (const controller of this.#incoming.values()) controller.abort("connection closed");
    this.#incoming.clear();
    this.#options.onClose?.(cause);
  }
}

function toTransportError(error: unknown, server: string, method: string): McplexError {
  if (error instanceof McplexError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new McplexError(
    "TRANSPORT_ERROR",
    `${server}: could not send ${method}: ${detail}`,
    { server, retryable: true },
    { cause: error },
  );
}
