import { ErrorCode } from "./error-codes.js";
import type { WireError } from "./wire-error.js";

/** A JSON-RPC request id as MCP allows it: a string or a number, never null. */
export type RequestId = string | number;

/** A client's request as it travels (checked by {@link readMessage}). */
export interface WireRequest {
  jsonrpc: "2.0";
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

/** A client's notification as it travels (checked by {@link readMessage}). */
export interface WireNotification {
  jsonrpc: "2.0";
  method: string;
  params?: Record<string, unknown>;
}

/** A client's answer to a server request. */
export interface WireResponse {
  jsonrpc: "2.0";
  id: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * What one message from a client is, once checked: the kind of a well-formed one (the value can
 * then be read as a {@link WireRequest}, {@link WireNotification} or {@link WireResponse}), or
 * why it is not one. `ignored`: a notification with a malformed body, which nothing may answer.
 */
export type MessageCheck =
  | "request"
  | "notification"
  | "response"
  | "ignored"
  /** `id` is the request's when it could be read (the answer goes to it), else `null`. */
  | { kind: "invalid"; id: RequestId | null; error: WireError };

const invalid = (id: RequestId | null, code: number, message: string): MessageCheck => ({
  kind: "invalid",
  id,
  error: { code, message },
});

/**
 * Checks one parsed JSON value as a client's message, with the rules every front shares: one
 * JSON-RPC 2.0 object (no batches), a request id that is a non-empty string or a number,
 * params that are an object when present. Allocates nothing for a well-formed message: this
 * runs for every message.
 */
export function readMessage(value: unknown): MessageCheck {
  if (Array.isArray(value))
    return invalid(null, ErrorCode.InvalidRequest, "Invalid Request: batches are not supported");
  if (typeof value !== "object" || value === null || (value as { jsonrpc?: unknown }).jsonrpc !== "2.0")
    return invalid(null, ErrorCode.InvalidRequest, "Invalid Request: expected a JSON-RPC 2.0 object");
  const m = value as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof m.method !== "string") {
    if (m.id !== undefined && ("result" in m || "error" in m)) return "response";
    return invalid(
      validId(m.id) ? m.id : null,
      ErrorCode.InvalidRequest,
      "Invalid Request: a request needs a method",
    );
  }
  const badParams =
    m.params !== undefined && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params));
  if (m.id === undefined) return badParams ? "ignored" : "notification";
  if (!validId(m.id))
    return invalid(
      null,
      ErrorCode.InvalidRequest,
      "Invalid Request: id must be a non-empty string or a number",
    );
  if (badParams) return invalid(m.id, ErrorCode.InvalidParams, "Invalid params: params must be an object");
  return "request";
}

function validId(id: unknown): id is RequestId {
  return (typeof id === "string" && id !== "") || typeof id === "number";
}
