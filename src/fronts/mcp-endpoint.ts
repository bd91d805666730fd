import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway/gateway.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { envelopeVersion, REV2026_PROTOCOL_VERSIONS } from "../protocol/rev2026.js";
import { parseErrorAnswer } from "../protocol/wire-error.js";
import type { AdmissionRefusal, Admitted } from "./caller.js";
import type { ClusterLink } from "./cluster-link.js";
import { routeRetry, routeSession, routeTask } from "./cluster-route.js";
import { sendOverBudget, sendRefusal, sendRpcError, sendShuttingDown } from "./http-exchange.js";
import {
  BodyOverBudgetError,
  BodyTimeoutError,
  BodyTooLargeError,
  bufferedBody,
  checkAccept,
  checkContentType,
  readBody,
} from "./http-guard.js";
import { type BudgetLease, budgetRefusal, type MemoryBudget } from "./memory-budget.js";
import type { ConcurrencyLimiter } from "./rate-limiter.js";
import type { RequestDrain } from "./request-drain.js";
import type { Rev2025HttpSessions } from "./rev2025-sessions.js";
import { serveRev2026Post } from "./rev2026-post.js";
import type { SseFront } from "./sse-front.js";

/** What the `/mcp` endpoint works with: the HTTP front's admission, sessions and limits. */
export interface McpEndpointParts {
  gateway: Gateway;
  /** One admission for a client's MCP request (see `HttpAdmission.admitClient`). */
  admit(
    req: IncomingMessage,
  ):
    | { caller: Admitted; internal: boolean }
    | AdmissionRefusal
    | Promise<{ caller: Admitted; internal: boolean } | AdmissionRefusal>;
  sessions: Rev2025HttpSessions;
  /** An HTTP+SSE client pointed at /mcp is served as on /sse. */
  sse: SseFront;
  drain: RequestDrain;
  budget: MemoryBudget;
  /** Requests in flight per client, and long-lived streams per client. */
  concurrency: ConcurrencyLimiter;
  streams: ConcurrencyLimiter;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  cluster?: ClusterLink;
}

/**
 * The MCP endpoint of Streamable HTTP, `/mcp`: a 2026 POST answered statelessly, a 2025
 * session's POST, GET stream and DELETE, and another replica's session forwarded to its owner.
 * Admission, the body's deadline and size, the memory budget and the per-client limits come
 * first; then the message goes to the gateway.
 */
export function mcpEndpoint(
  parts: McpEndpointParts,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const { sessions, sse, drain, cluster } = parts;
  const body = callBodyReader(parts);
  return async (req, res) => {
    if (drain.draining) return sendShuttingDown(res);
    const admitted = await parts.admit(req);
    if ("status" in admitted) return sendRefusal(res, admitted);
    const { caller, internal } = admitted;
    // A fresh DPoP nonce (RFC 9449 §8.2) rides on whatever answer this request gets.
    for (const name in caller.responseHeaders) res.setHeader(name, caller.responseHeaders[name]!);
    // Another replica's session: GET and DELETE go there now, a POST once its body is read.
    if (cluster !== undefined && req.method !== "POST") {
      const routed = routeSession(cluster, req, res, internal, drain);
      if (routed !== undefined) return routed;
    }
    if (req.method === "GET") {
      // No 2025 session named: an HTTP+SSE client pointed at /mcp (its config says `sse`).
      if (req.headers["mcp-session-id"] === undefined && req.headers.accept?.includes("text/event-stream"))
        return sse.open(res, caller);
      return sessions.get(req, res, caller);
    }
    if (req.method === "DELETE") return sessions.delete(req, res, caller);
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
      return;
    }
    return servePost(parts, body, req, res, caller, internal);
  };
}

/**
 * A POST to `/mcp`: its headers checked, its body read under the memory budget and its deadline,
 * another replica's session forwarded, then a call slot taken before the message is handled.
 */
async function servePost(
  parts: McpEndpointParts,
  body: CallBodyReader,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Admitted,
  internal: boolean,
): Promise<void> {
  const { budget, drain, cluster, concurrency, streams } = parts;
  const type = checkContentType(req.headers["content-type"]);
  if (!type.ok) return sendRpcError(res, type.status, null, ErrorCode.ServerError, type.message);
  const accept = checkAccept(req.headers.accept);
  if (!accept.ok) return sendRpcError(res, 406, null, ErrorCode.ServerError, accept.message);
  caller.sseAllowed = accept.sse;
  // Held from before the body is read until the answer is written out; a body too large
  // for the limit is answered 413 by the read.
  const declared = Number(req.headers["content-length"] ?? 0);
  const lease = budget.reserve(declared <= parts.maxBodyBytes ? declared : 0);
  if (lease === undefined) return sendOverBudget(res, budget);
  caller.lease = lease;
  // Counted for a graceful close from here: a body on its way is waited for too.
  const uncount = drain.enter();
  let release: (() => void) | undefined;
  // One listener for all three: each request adds it, and `once` wraps every listener it adds.
  res.on("close", () => {
    lease.release();
    uncount();
    release?.();
  });
  // Node's parser reads a body that came with the head only after this handler's promises
  // have run: one turn of the event loop later a small body is complete, and is read at once
  // (no listeners, no deadline timer, no stream flowing); a body still on its way is read as
  // it comes, under its deadline.
  if (!req.complete) await nextTurn();
  const bytes = req.complete ? body.buffered(req, res, lease) : await body.read(req, res, lease);
  if (bytes === undefined) return;
  if (cluster !== undefined) {
    const routed = routeSession(cluster, req, res, internal, drain, bytes);
    if (routed !== undefined) return routed;
  }
  release = concurrency.acquire(caller.key);
  if (release === undefined) {
    return sendRpcError(
      res,
      429,
      null,
      ErrorCode.ServerError,
      `Too Many Requests: ${concurrency.max} requests already in flight for this client; wait for their answers`,
    );
  }
  caller.openStream = () => {
    // A listen lives until the client goes: it leaves the calls for the streams' own bound.
    const closeStream = streams.acquire(caller.key);
    if (closeStream === undefined)
      return `Too Many Requests: too many open streams for this client (limit ${streams.max}); close one first`;
    release?.();
    uncount();
    // A stream's events go out as they come; its request no longer waits.
    lease.release();
    res.once("close", closeStream);
    return undefined;
  };
  return serveMessage(parts, req, res, bytes, caller, internal);
}

/**
 * A POST's JSON-RPC message, once it holds a call slot: a 2026 request (its envelope says so)
 * answered statelessly or routed to the replica that holds its task, else a 2025 session's.
 */
async function serveMessage(
  parts: McpEndpointParts,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  caller: Admitted,
  internal: boolean,
): Promise<void> {
  const { gateway, cluster } = parts;
  let message: unknown;
  try {
    message = JSON.parse(body.toString("utf8"));
  } catch (error) {
    const { code, message } = parseErrorAnswer(error).error;
    return sendRpcError(res, 400, null, code, message);
  }
  if (Array.isArray(message)) {
    return sendRpcError(
      res,
      400,
      null,
      ErrorCode.InvalidRequest,
      "Invalid Request: batches are not supported; send one message per POST",
    );
  }
  if (
    typeof message !== "object" ||
    message === null ||
    (message as { jsonrpc?: unknown }).jsonrpc !== "2.0"
  ) {
    return sendRpcError(
      res,
      400,
      null,
      ErrorCode.InvalidRequest,
      "Invalid Request: expected a JSON-RPC 2.0 object",
    );
  }
  const m = message as { id?: unknown; method?: unknown; params?: unknown };
  const version = typeof m.method === "string" ? envelopeVersion(m.params) : undefined;
  if (version !== undefined) {
    if (cluster !== undefined) {
      const routed = routeRetry(cluster, gateway.parking, req, res, m, body, internal);
      if (routed !== false && (await routed)) return;
      const task = routeTask(cluster, gateway, req, res, m, body, caller, internal);
      if (task !== undefined) return task;
    }
    return serveRev2026Post(gateway, req, res, message, version, caller);
  }
  const claimed = req.headers["mcp-protocol-version"];
  if (
    typeof claimed === "string" &&
    REV2026_PROTOCOL_VERSIONS.includes(claimed) &&
    typeof m.method === "string"
  ) {
    // A 2026 request whose body lost its envelope: say what is missing rather than "no session".
    return sendRpcError(
      res,
      400,
      m.id,
      ErrorCode.InvalidParams,
      `Invalid params: a ${claimed} request carries _meta["io.modelcontextprotocol/protocolVersion"] and clientCapabilities`,
    );
  }
  parts.sessions.post(req, res, message as Record<string, unknown>, caller);
}

/**
 * Reads a POST body before the request takes a call slot (a client dribbling bodies must not
 * hold slots others need), under the body's limit, its deadline and the memory budget; a body
 * that cannot be read is answered (413, 408, 503) or its connection closed, and is `undefined`.
 */
interface CallBodyReader {
  /** A body still on its way, read as it comes under its deadline. */
  read(req: IncomingMessage, res: ServerResponse, lease: BudgetLease): Promise<Buffer | undefined>;
  /** A body that has arrived in full: read now, without a promise. */
  buffered(req: IncomingMessage, res: ServerResponse, lease: BudgetLease): Buffer | undefined;
}

/** The {@link CallBodyReader} of an endpoint's limits. */
function callBodyReader(parts: McpEndpointParts): CallBodyReader {
  const { maxBodyBytes: maxBody, bodyTimeoutMs, budget } = parts;
  /** What a body past the memory budget is told (the budget's limit does not change). */
  const overBudget = budgetRefusal(budget);
  /** Answers a body that could not be read (413, 408, 503), or closes the connection. */
  const refuseBody = (res: ServerResponse, error: unknown): void => {
    // The rest of the body stays unread: this connection cannot be reused.
    res.shouldKeepAlive = false;
    if (error instanceof BodyTooLargeError) {
      sendRpcError(
        res,
        413,
        null,
        ErrorCode.InvalidRequest,
        `Payload Too Large: the limit is ${maxBody} bytes`,
      );
    } else if (error instanceof BodyTimeoutError) {
      sendRpcError(res, 408, null, ErrorCode.ServerError, error.message);
    } else if (error instanceof BodyOverBudgetError) {
      sendOverBudget(res, budget, error.message);
    } else {
      res.destroy();
    }
  };
  return {
    read: async (req, res, lease) => {
      try {
        return await readBody(req, maxBody, undefined, bodyTimeoutMs, { lease, overBudget });
      } catch (error) {
        refuseBody(res, error);
        return undefined;
      }
    },
    buffered: (req, res, lease) => {
      try {
        return bufferedBody(req, maxBody, { lease, overBudget });
      } catch (error) {
        refuseBody(res, error);
        return undefined;
      }
    },
  };
}

/** Resolves in the event loop's next check phase (after the I/O being handled now). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
