import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { RpcError } from "../errors.js";
import { statelessContext } from "../gateway/call-request.js";
import type { Gateway } from "../gateway/gateway.js";
import { ControllerPool } from "../protocol/controller-pool.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { readMessage, type WireRequest } from "../protocol/messages.js";
import { type ParamHeader, paramHeaders, scanParamHeaders } from "../protocol/param-headers.js";
import { readEnvelope } from "../protocol/rev2026.js";
import { toWireError } from "../protocol/wire-error.js";
import { onExpiry } from "./authenticator.js";
import type { Caller } from "./caller.js";
import { HttpExchange, sendRpcError } from "./http-exchange.js";

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

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes an `Mcp-Name` / `Mcp-Param-*` value: plain, or `=?base64?...?=` for unsafe
 * text. Strict: malformed base64 (bad characters, missing padding) is `undefined`.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (value.startsWith("=?base64?") && value.endsWith("?=")) {
    const encoded = value.slice(9, -2);
    return BASE64.test(encoded) ? Buffer.from(encoded, "base64").toString("utf8") : undefined;
  }
  return value;
}

/**
 * The 2026 standard headers of a request POST, checked against its body:
 * `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` where the method names a
 * tool, prompt, resource or task. Returns the -32020 error to answer, or undefined.
 */
export function checkRev2026Headers(
  headers: IncomingHttpHeaders,
  method: string,
  params: Record<string, unknown> | undefined,
  bodyVersion: string,
  nameHeader: "name" | "uri" | "taskId" | undefined,
): { code: number; message: string } | undefined {
  const version = headers["mcp-protocol-version"];
  if (typeof version !== "string") return mismatch("the MCP-Protocol-Version header is missing");
  if (version !== bodyVersion) {
    return mismatch(
      `MCP-Protocol-Version ${version} does not match the request's _meta protocol version ${bodyVersion}`,
    );
  }
  const headerMethod = headers["mcp-method"];
  if (typeof headerMethod !== "string") return mismatch("the Mcp-Method header is missing");
  if (headerMethod !== method)
    return mismatch(`Mcp-Method ${headerMethod} does not match the body's method ${method}`);
  const key = nameHeader;
  if (key !== undefined) {
    const name = headers["mcp-name"];
    if (typeof name !== "string") return mismatch(`the Mcp-Name header is missing (${method} needs it)`);
    const expected = params?.[key];
    const decoded = decodeHeaderValue(name);
    if (decoded === undefined) return mismatch("Mcp-Name is not valid base64");
    if (decoded !== expected) return mismatch(`Mcp-Name does not match params.${key}`);
  }
  return undefined;
}

function mismatch(message: string): { code: number; message: string } {
  return { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${message}` };
}

/** Header values must be visible ASCII (non-ASCII travels base64-wrapped). */
const FIELD_VALUE = /^[\x20-\x7e\t]*$/;
const scans = new WeakMap<object, readonly ParamHeader[]>();

/**
 * The `Mcp-Param-*` headers of a 2026 `tools/call`, checked against the arguments the
 * tool's `x-mcp-header` annotations name: each must be present exactly when the
 * argument has a value, carry that value, and use only valid characters.
 */
export function checkParamHeaders(
  headers: IncomingHttpHeaders,
  inputSchema: object,
  args: unknown,
): { code: number; message: string } | undefined {
  let annotated = scans.get(inputSchema);
  if (annotated === undefined) {
    const scan = scanParamHeaders(inputSchema);
    annotated = scan.valid ? scan.headers : [];
    scans.set(inputSchema, annotated);
  }
  if (annotated.length === 0) return undefined;
  const expected = paramHeaders(annotated, args);
  for (const { name } of annotated) {
    const key = `mcp-param-${name.toLowerCase()}`;
    const sent = headers[key];
    const want = expected[`Mcp-Param-${name}`];
    if (typeof sent === "string" && !FIELD_VALUE.test(sent)) {
      return mismatch(`Mcp-Param-${name} has characters a header cannot carry; base64-wrap the value`);
    }
    if (want === undefined) {
      if (sent !== undefined) return mismatch(`Mcp-Param-${name} is sent but the argument has no value`);
      continue;
    }
    if (typeof sent !== "string") return mismatch(`the Mcp-Param-${name} header is missing`);
    const decoded = decodeHeaderValue(sent);
    if (decoded === undefined) return mismatch(`Mcp-Param-${name} is not valid base64`);
    if (decoded !== decodeHeaderValue(want)) {
      return mismatch(`Mcp-Param-${name} does not match the argument it mirrors`);
    }
  }
  return undefined;
}
