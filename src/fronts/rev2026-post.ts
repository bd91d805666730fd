import type { IncomingMessage, ServerResponse } from "node:http";
import type { RpcError } from "../errors.js";
import type { Gateway } from "../gateway/gateway.js";
import { statelessContext } from "../gateway/request-context.js";
import { ControllerPool } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { readMessage, type WireRequest } from "../protocol/messages.js";
import { readEnvelope } from "../protocol/rev2026.js";
import { toWireError } from "../protocol/wire-error.js";
import { onExpiry } from "./authenticator.js";
import type { Caller } from "./caller.js";
import { HttpExchange, sendRpcError } from "./http-exchange.js";
import { checkParamHeaders, checkRev2026Headers } from "./rev2026-headers.js";

/** Request controllers kept for reuse across requests (see {@link ControllerPool} for the rule). */
const controllers = new ControllerPool(256);

/** HTTP status of a JSON-RPC error raised while serving a 2026 request. */
function statusOf(code: number): number {
  if (code === ErrorCode.MethodNotFound) return 404;
  if (code === ErrorCode.MissingClientCapability || code === ErrorCode.UnsupportedProtocolVersion) return 400;
  return 200;
}

/**
 * Serves one stateless 2026 POST: headers checked against the body, the envelope
 * read, the request dispatched. The answer is JSON unless progress or log messages
 * come first; closing the connection cancels the request.
 */
export async function serveRev2026Post(
  gateway: Gateway,
  req: IncomingMessage,
  res: ServerResponse,
  message: unknown,
  version: string,
  caller: Caller,
): Promise<void> {
  const check = readMessage(message);
  if (check === "notification" || check === "ignored") {
    // 2026 defines no client notifications over HTTP (cancellation is closing the stream).
    res.writeHead(202).end();
    return;
  }
  if (typeof check === "object") {
    sendRpcError(res, 400, check.id, check.error.code, check.error.message);
    return;
  }
  if (check !== "request") {
    sendRpcError(res, 400, null, ErrorCode.InvalidRequest, "Invalid Request: a request needs a method");
    return;
  }
  const { id, method, params } = message as WireRequest;
  const headerError = checkRev2026Headers(
    req.headers,
    method,
    params,
    version,
    gateway.methods.get(method)?.nameHeader,
  );
  if (headerError !== undefined) {
    sendRpcError(res, 400, id, headerError.code, headerError.message);
    return;
  }
  let envelope: ReturnType<typeof readEnvelope>;
  try {
    envelope = readEnvelope(params);
  } catch (error) {
    const e = error as RpcError;
    sendRpcError(res, 400, id, e.code, e.message, e.data);
    return;
  }
  const controller = controllers.take();
  const exchange = new HttpExchange(res, {
    sseAllowed: caller.sseAllowed,
    lease: caller.lease,
    challenge: caller.challenge,
  });
  res.on("close", () => {
    if (!exchange.done) controller.abort("the client closed the request");
  });
  const ctx = statelessContext(envelope, {
    signal: controller.signal,
    notify: (m, p) => exchange.event({ jsonrpc: "2.0", method: m, params: p }),
    profile: caller.profile,
    mode: caller.mode,
    caller: caller.key,
    identity: caller.identity,
    headers: req.headers,
    front: "http",
  });
  const request = gateway.request(id, method, params, ctx);
  const tool = request.target?.kind === "tool" ? request.target.tool : undefined;
  const paramError =
    tool === undefined ? undefined : checkParamHeaders(req.headers, tool.inputSchema, params?.arguments);
  if (paramError !== undefined) {
    sendRpcError(res, 400, id, paramError.code, paramError.message);
    controllers.give(controller);
    return;
  }

  if (method === "subscriptions/listen") {
    if (!caller.sseAllowed) {
      sendRpcError(
        res,
        406,
        id,
        ErrorCode.InvalidRequest,
        "Not Acceptable: subscriptions/listen answers with text/event-stream; accept it",
      );
      controllers.give(controller);
      return;
    }
    const refused = caller.openStream?.();
    if (refused !== undefined) {
      sendRpcError(res, 429, id, ErrorCode.ServerError, refused);
      controllers.give(controller);
      return;
    }
    let listening: Promise<void>;
    try {
      listening = gateway.listen(id, params ?? {}, ctx, (m, p) =>
        exchange.event({ jsonrpc: "2.0", method: m, params: p }),
      );
    } catch (error) {
      // Refused before anything was sent (a missing capability): a plain JSON-RPC error.
      const wire = toWireError(error);
      exchange.finish({ jsonrpc: "2.0", id, error: wire }, statusOf(wire.code));
      controllers.give(controller);
      return;
    }
    exchange.open();
    const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
    keepAlive.unref();
    // A signed-in client's listen lasts as long as its token: then it listens again with a fresh one.
    const unexpire = onExpiry(caller.identity, () => controller.abort("the access token expired"));
    try {
      await listening;
    } finally {
      unexpire();
      clearInterval(keepAlive);
      exchange.end();
      controllers.give(controller);
    }
    return;
  }
  try {
    const result = await gateway.handle(request);
    exchange.finish({ jsonrpc: "2.0", id, result });
  } catch (error) {
    const wire = toWireError(error);
    exchange.finish({ jsonrpc: "2.0", id, error: wire }, statusOf(wire.code));
  }
  // The exchange is done, so this response's close can no longer abort it.
  controllers.give(controller);
}
