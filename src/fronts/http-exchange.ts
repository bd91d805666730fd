import type { ServerResponse } from "node:http";
import type { WireMessage } from "../gateway/client-session.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { stringifyMessage } from "../protocol/messages.js";
import type { AdmissionRefusal } from "./http-admission.js";
import {
  BUDGET_RETRY_AFTER_SECONDS,
  type BudgetLease,
  budgetRefusal,
  type MemoryBudget,
} from "./memory-budget.js";

/** An exchange's headers when it is given none (told apart by identity). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * One POST's answer: plain JSON when only the final response comes, switching to an
 * SSE stream as soon as anything else must be sent first (progress, logs, server
 * requests). JSON is the fast path and the common case.
 */
export class HttpExchange {
  readonly #res: ServerResponse;
  readonly #sseAllowed: boolean;
  readonly #headers: Record<string, string>;
  readonly #lease: BudgetLease | undefined;
  readonly #challenge: ((scope: string) => string) | undefined;
  #streaming = false;
  #done = false;

  /**
   * `lease`: what the request holds of the memory budget; what is written is charged to it too
   * (it waits in the socket while the client reads slowly), until the response closes.
   * `challenge`: a signed-in caller's step-up challenge; a final answer refusing the call for
   * want of a scope goes out as 403 with it, as OAuth clients expect (when nothing was streamed).
   */
  constructor(
    res: ServerResponse,
    options: {
      sseAllowed: boolean;
      headers?: Record<string, string> | undefined;
      lease?: BudgetLease | undefined;
      challenge?: ((scope: string) => string) | undefined;
    },
  ) {
    this.#res = res;
    this.#sseAllowed = options.sseAllowed;
    this.#headers = options.headers ?? NO_HEADERS;
    this.#lease = options.lease;
    this.#challenge = options.challenge;
  }

  get done(): boolean {
    return this.#done;
  }

  /** Whether messages before the final response can still be sent (SSE accepted, not finished). */
  get canStream(): boolean {
    return this.#sseAllowed && !this.#done;
  }

  /** Sends a message that comes before the final response (dropped if the client takes JSON only). */
  event(message: WireMessage): void {
    if (this.#done || !this.#sseAllowed) return;
    this.#startStream();
    const text = `event: message\ndata: ${stringifyMessage(message)}\n\n`;
    this.#lease?.charge(text.length);
    this.#res.write(text);
  }

  /** Sends the final response and ends the exchange. */
  finish(message: WireMessage, status = 200): void {
    if (this.#done) return;
    this.#done = true;
    const body = stringifyMessage(message);
    this.#lease?.charge(body.length);
    if (this.#streaming) {
      this.#res.end(`event: message\ndata: ${body}\n\n`);
      return;
    }
    const scope = this.#challenge === undefined ? undefined : missingScope(message);
    const length = String(Buffer.byteLength(body));
    if (scope === undefined && this.#headers === NO_HEADERS) {
      // The common answer: a flat array is the cheapest form of headers Node takes.
      this.#res.writeHead(status, ["content-type", "application/json", "content-length", length]);
    } else {
      this.#res.writeHead(scope === undefined ? status : 403, {
        ...this.#headers,
        ...(scope === undefined ? {} : { "www-authenticate": this.#challenge!(scope) }),
        "content-type": "application/json",
        "content-length": length,
      });
    }
    this.#res.end(body);
  }

  /** Keeps an SSE stream open (long-lived listens): starts it now. */
  open(): void {
    if (this.#startStream()) this.#res.flushHeaders();
  }

  /** Starts the SSE response unless it has started; `true` when it starts now. */
  #startStream(): boolean {
    if (this.#streaming) return false;
    this.#streaming = true;
    this.#res.writeHead(200, {
      ...this.#headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    return true;
  }

  /** Ends without a response (a stream the client or the gateway closes). */
  end(): void {
    if (this.#done) return;
    this.#done = true;
    this.#res.end();
  }
}

/** The scopes an answer says the caller lacks (`ErrorCode.Forbidden`, `insufficient_scope`), if it does. */
function missingScope(message: WireMessage): string | undefined {
  const error = message.error as { code?: unknown; data?: { reason?: unknown; scope?: unknown } } | undefined;
  if (error?.code !== ErrorCode.Forbidden || error.data?.reason !== "insufficient_scope") return undefined;
  return typeof error.data.scope === "string" ? error.data.scope : undefined;
}

/** Writes a plain JSON body with a status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** A JSON-RPC error answer as an HTTP response. */
export function sendRpcError(
  res: ServerResponse,
  status: number,
  id: unknown,
  code: number,
  message: string,
  data?: unknown,
  headers: Record<string, string> = {},
): void {
  const error = data === undefined ? { code, message } : { code, message, data };
  sendJson(res, status, { jsonrpc: "2.0", id: id ?? null, error }, headers);
}

/** The answer to a request that comes while the front is shutting down (retry elsewhere or soon). */
export function sendShuttingDown(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  sendRpcError(
    res,
    503,
    null,
    ErrorCode.ServerError,
    "Service Unavailable: the gateway is shutting down",
    undefined,
    {
      "retry-after": "1",
    },
  );
}

/** The answer to a request the admission refused (Host/Origin, token, rate). */
export function sendRefusal(res: ServerResponse, refusal: AdmissionRefusal): void {
  sendRpcError(res, refusal.status, null, ErrorCode.ServerError, refusal.message, undefined, refusal.headers);
}

/**
 * The answer to a request refused for the memory budget: 503 with `Retry-After`, sent at once.
 * Refused from its Content-Length (at most the body limit), the connection stays open: Node
 * reads the rest of the body and drops it, keeping nothing, so a client still sending gets its
 * answer rather than a broken pipe. Refused midway (a body without Content-Length), the caller
 * closes the connection instead, as the rest could be endless.
 */
export function sendOverBudget(
  res: ServerResponse,
  budget: MemoryBudget,
  message = budgetRefusal(budget),
): void {
  sendRpcError(res, 503, null, ErrorCode.ServerError, message, undefined, {
    "retry-after": String(BUDGET_RETRY_AFTER_SECONDS),
  });
}
