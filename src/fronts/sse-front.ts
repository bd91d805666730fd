import type { IncomingMessage, ServerResponse } from "node:http";
import type { Channel, ClientSession, WireMessage } from "../gateway/client-session.js";
import type { Gateway } from "../gateway/gateway.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { stringifyMessage } from "../protocol/messages.js";
import { parseErrorAnswer } from "../protocol/wire-error.js";
import { onExpiry } from "./authenticator.js";
import { type Caller, sessionRefusal } from "./caller.js";
import { LOCAL_SESSIONS, type SessionDirectory } from "./cluster-link.js";
import type { AdmissionRefusal } from "./http-admission.js";
import { sendOverBudget, sendRefusal, sendRpcError, sendShuttingDown } from "./http-exchange.js";
import {
  BodyOverBudgetError,
  BodyTimeoutError,
  BodyTooLargeError,
  checkContentType,
  readBody,
} from "./http-guard.js";
import { type BudgetLease, budgetRefusal, type MemoryBudget } from "./memory-budget.js";
import type { ConcurrencyLimiter } from "./rate-limiter.js";

type Id = string | number;

/** The GET stream of the 2024-11-05 HTTP+SSE transport. */
export const SSE_PATH = "/sse";
/** Where that transport's clients POST their messages, with `?sessionId=`. */
export const SSE_MESSAGES_PATH = "/messages";

/** What {@link SseFront} needs from the HTTP front it is mounted on. */
export interface SseFrontOptions {
  /**
   * The HTTP front's admission: the caller, and whether another replica forwarded the request
   * (`internal`: it is not forwarded again); or why it is refused.
   */
  admit(
    req: IncomingMessage,
  ):
    | { caller: Caller & { key: string }; internal: boolean }
    | AdmissionRefusal
    | Promise<{ caller: Caller & { key: string }; internal: boolean } | AdmissionRefusal>;
  /** Requests in flight per client, shared with /mcp. */
  concurrency: ConcurrencyLimiter;
  /** Open streams per client, shared with /mcp's listen streams: a stream holds no call slot. */
  streams: ConcurrencyLimiter;
  maxBodyBytes: number;
  /** Time a message body has to arrive in full (ms); 408 past it. */
  bodyTimeoutMs: number;
  /** The memory budget shared with /mcp and /ws: a request holds its share until answered. */
  budget: MemoryBudget;
  /** `true` once the front is shutting down: new streams and messages are refused. */
  draining(): boolean;
  /** Session ids that name the replica holding them (one of several). Default: random, all local. */
  directory?: SessionDirectory;
  /** Sends a message for another replica's session there, with its body (read and checked here). */
  forward?(replica: string, req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void>;
}

/**
 * A session's messages on its GET stream: in this transport every answer, notification and
 * server request travels there, and POSTs only get 202. Each client request holds one of its
 * caller's concurrency slots until its answer is written.
 */
class SseStreamChannel implements Channel {
  readonly #res: ServerResponse;
  readonly held = new Map<Id, () => void>();
  onClose: (() => void) | undefined;
  #closed = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  send(message: WireMessage, related?: Id): boolean {
    if (this.#closed) return false;
    if (related !== undefined && message.method === undefined && message.id === related) {
      this.held.get(related)?.();
      this.held.delete(related);
    }
    this.#res.write(`event: message\ndata: ${stringifyMessage(message)}\n\n`);
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const release of this.held.values()) release();
    this.held.clear();
    this.#res.end();
    this.onClose?.();
  }
}

interface Entry {
  session: ClientSession;
  channel: SseStreamChannel;
  profile: string | undefined;
}

/**
 * The 2024-11-05 HTTP+SSE transport, which clients configured with `type: sse` still speak:
 * `GET /sse` opens a session and announces `/messages?sessionId=...` as an `endpoint` event;
 * the client POSTs each message there (202), and everything the gateway sends comes back
 * as `message` events on the stream. Closing the stream ends the session. Every request
 * passes the same checks as `/mcp`.
 */
export class SseFront {
  readonly #gateway: Gateway;
  readonly #options: SseFrontOptions;
  readonly #sessions = new Map<string, Entry>();

  constructor(gateway: Gateway, options: SseFrontOptions) {
    this.#gateway = gateway;
    this.#options = options;
  }

  /** Whether this front serves `path`. */
  static owns(path: string): boolean {
    return path === SSE_PATH || path === SSE_MESSAGES_PATH;
  }

  /** Open sessions (one per GET stream). */
  get size(): number {
    return this.#sessions.size;
  }

  /** Serves a request whose path {@link SseFront.owns}. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (this.#options.draining()) return sendShuttingDown(res);
    const admitted = await this.#options.admit(req);
    if ("status" in admitted) return sendRefusal(res, admitted);
    const { caller, internal } = admitted;
    // A fresh DPoP nonce (RFC 9449 §8.2) rides on whatever answer this request gets.
    for (const name in caller.responseHeaders) res.setHeader(name, caller.responseHeaders[name]!);
    if (path === SSE_PATH) {
      if (req.method !== "GET") {
        res.writeHead(405, { allow: "GET" }).end();
        return;
      }
      this.open(res, caller);
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    await this.#post(req, res, caller, internal);
  }

  /**
   * Opens a session on `res` as its event stream, for a caller already admitted. Also used for
   * a GET /mcp with no `Mcp-Session-Id`, which is how SSE clients pointed at /mcp begin.
   */
  open(res: ServerResponse, caller: Caller & { key: string }): void {
    const closeStream = this.#options.streams.acquire(caller.key);
    if (closeStream === undefined) {
      sendRpcError(
        res,
        429,
        null,
        ErrorCode.ServerError,
        `Too Many Requests: too many open streams for this client (limit ${this.#options.streams.max}); close one first`,
      );
      return;
    }
    res.once("close", closeStream);
    const id = (this.#options.directory ?? LOCAL_SESSIONS).mint();
    const channel = new SseStreamChannel(res);
    const profile = caller.profile;
    const session = this.#gateway.openSession(channel, {
      id,
      profile,
      mode: caller.mode,
      caller: caller.key,
      identity: caller.identity,
      front: "sse",
    });
    channel.onClose = () => this.#sessions.delete(id);
    this.#sessions.set(id, { session, channel, profile });
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    });
    // Relative, as the SDK's clients resolve it against the stream's URL (proxies keep working).
    res.write(`event: endpoint\ndata: ${SSE_MESSAGES_PATH}?sessionId=${id}\n\n`);
    // A signed-in client's stream lasts as long as its token: then it reconnects with a fresh one.
    const unexpire = onExpiry(caller.identity, () => res.end());
    res.on("close", () => {
      unexpire();
      session.close();
    });
  }

  async #post(
    req: IncomingMessage,
    res: ServerResponse,
    caller: Caller & { key: string },
    internal: boolean,
  ): Promise<void> {
    const sessionId = new URL(req.url ?? "/", "http://gateway").searchParams.get("sessionId");
    if (sessionId === null || sessionId === "") {
      sendRpcError(
        res,
        400,
        null,
        ErrorCode.ServerError,
        `Bad Request: the sessionId query parameter is required; POST to the endpoint that GET ${SSE_PATH} announced`,
      );
      return;
    }
    // Another replica's session gets the message once its body is read; an id no replica
    // minted, or one forwarded here that is not here, is not found.
    const where = (this.#options.directory ?? LOCAL_SESSIONS).locate(sessionId);
    const entry = where.kind === "local" ? this.#sessions.get(sessionId) : undefined;
    const owner = where.kind === "remote" && !internal ? where.replica : undefined;
    const forward = this.#options.forward;
    if (entry === undefined && (owner === undefined || forward === undefined)) {
      sendRpcError(
        res,
        404,
        null,
        ErrorCode.SessionNotFound,
        `Session not found: its stream closed; open GET ${SSE_PATH} again`,
      );
      return;
    }
    const refusal =
      entry === undefined
        ? undefined
        : sessionRefusal(
            { profile: entry.profile, key: entry.session.caller, identity: entry.session.identity },
            caller,
          );
    if (refusal !== undefined) {
      sendRpcError(res, 403, null, ErrorCode.ServerError, refusal);
      return;
    }
    // As on /mcp: a renewed token of the stream's caller counts from its first message.
    if (entry?.session.caller === caller.key && caller.identity !== undefined)
      entry.session.identity = caller.identity;
    const type = checkContentType(req.headers["content-type"]);
    if (!type.ok) {
      sendRpcError(res, type.status, null, ErrorCode.ServerError, type.message);
      return;
    }
    const { budget, maxBodyBytes } = this.#options;
    const declared = Number(req.headers["content-length"] ?? 0);
    // Held until the message is passed on, or a request's answer is written on the stream.
    const lease = budget.reserve(declared <= maxBodyBytes ? declared : 0);
    if (lease === undefined) return sendOverBudget(res, budget);
    let body: Buffer;
    try {
      body = await readBody(req, maxBodyBytes, undefined, this.#options.bodyTimeoutMs, {
        lease,
        overBudget: budgetRefusal(budget),
      });
    } catch (error) {
      lease.release();
      if (error instanceof BodyOverBudgetError) {
        res.shouldKeepAlive = false;
        return sendOverBudget(res, budget, error.message);
      }
      if (error instanceof BodyTimeoutError) {
        res.shouldKeepAlive = false;
        sendRpcError(res, 408, null, ErrorCode.ServerError, error.message);
        return;
      }
      if (error instanceof BodyTooLargeError) {
        res.shouldKeepAlive = false;
        sendRpcError(
          res,
          413,
          null,
          ErrorCode.InvalidRequest,
          `Payload Too Large: the limit is ${this.#options.maxBodyBytes} bytes`,
        );
        return;
      }
      res.destroy();
      return;
    }
    if (entry === undefined) {
      res.once("close", () => lease.release());
      await forward?.(owner!, req, res, body);
      return;
    }
    // Released with the answer (a request), else once the message is passed on.
    let held = false;
    try {
      held = this.#deliver(entry, res, body, caller, lease);
    } finally {
      if (!held) lease.release();
    }
  }

  /** Passes a message on to its session; `true` when it is a request now waiting for its answer. */
  #deliver(
    entry: Entry,
    res: ServerResponse,
    body: Buffer,
    caller: Caller & { key: string },
    lease: BudgetLease,
  ): boolean {
    let message: unknown;
    try {
      message = JSON.parse(body.toString("utf8"));
    } catch (error) {
      const { code, message: text } = parseErrorAnswer(error).error;
      sendRpcError(res, 400, null, code, text);
      return false;
    }
    const request = (typeof message === "object" && message !== null ? message : {}) as {
      id?: unknown;
      method?: unknown;
    };
    const isRequest =
      typeof request.method === "string" &&
      (typeof request.id === "string" || typeof request.id === "number");
    if (isRequest && entry.channel.held.has(request.id as Id)) {
      // Answered on the stream, that refusal would free the slot of the request still running.
      sendRpcError(
        res,
        400,
        request.id,
        ErrorCode.InvalidRequest,
        `Invalid Request: id ${JSON.stringify(request.id)} is already in use`,
      );
      return false;
    }
    if (isRequest) {
      const release = this.#options.concurrency.acquire(caller.key);
      if (release === undefined) {
        sendRpcError(res, 429, null, ErrorCode.ServerError, "Too Many Requests: too many requests in flight");
        return false;
      }
      entry.channel.held.set(request.id as Id, () => {
        release();
        lease.release();
      });
    }
    if (request.method === "notifications/cancelled") {
      // A cancelled request gets no answer: its slot is freed here.
      const cancelled = (request as { params?: { requestId?: Id } }).params?.requestId;
      if (cancelled !== undefined) {
        entry.channel.held.get(cancelled)?.();
        entry.channel.held.delete(cancelled);
      }
    }
    res.writeHead(202).end("Accepted");
    // Malformed messages are answered by the session, on the stream, like on every front.
    entry.session.receive(message);
    return isRequest;
  }

  /** Ends every session and its stream. */
  close(): void {
    for (const entry of [...this.#sessions.values()]) entry.session.close();
  }
}
