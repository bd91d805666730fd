import { ErrorCode } from "./error-codes.js";
import type { WireError } from "./wire-error.js";

/** A JSON-RPC request id as MCP allows it: a string or a number, never null. */
export type RequestId = string | number;

/** One message from a client, read and checked: what it is, or why it is not one. */
export type ClientMessage =
  | { kind: "request"; id: RequestId; method: string; params?: Record<string, unknown> }
  | { kind: "notification"; method: string; params?: Record<string, unknown> }
  | { kind: "response"; id: unknown; result?: unknown; error?: unknown }
  /** `id` is the request's when it could be read (the answer goes to it), else `null`. */
  | { kind: "invalid"; id: RequestId | null; error: WireError }
  /** A notification with a malformed body: nothing may answer it. */
  | { kind: "ignored" };

const invalid = (id: RequestId | null, code: number, message: string): ClientMessage => ({
  kind: "invalid",
  id,
  error: { code, message },
});

/**
 * Reads one parsed JSON value as a client's message, with the rules every front shares: one
 * JSON-RPC 2.0 object (no batches), a request id that is a non-empty string or a number,
 * params that are an object when present.
 */
export function readMessage(value: unknown): ClientMessage {
  if (Array.isArray(value))
    return invalid(null, ErrorCode.InvalidRequest, "Invalid Request: batches are not supported");
  if (typeof value !== "object" || value === null || (value as { jsonrpc?: unknown }).jsonrpc !== "2.0")
    return invalid(null, ErrorCode.InvalidRequest, "Invalid Request: expected a JSON-RPC 2.0 object");
  const m = value as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
  if (typeof m.method !== "string") {
    if (m.id !== undefined && ("result" in m || "error" in m))
      return { kind: "response", id: m.id, result: m.result, error: m.error };
    return invalid(
      validId(m.id) ? m.id : null,
      ErrorCode.InvalidRequest,
      "Invalid Request: a request needs a method",
    );
  }
  const badParams =
    m.params !== undefined && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params));
  if (m.id === undefined) {
    if (badParams) return { kind: "ignored" };
    const note: ClientMessage = { kind: "notification", method: m.method };
    if (m.params !== undefined) note.params = m.params as Record<string, unknown>;
    return note;
  }
  if (!validId(m.id))
    return invalid(
      null,
      ErrorCode.InvalidRequest,
      "Invalid Request: id must be a non-empty string or a number",
    );
  if (badParams) return invalid(m.id, ErrorCode.InvalidParams, "Invalid params: params must be an object");
  const request: ClientMessage = { kind: "request", id: m.id, method: m.method };
  if (m.params !== undefined) request.params = m.params as Record<string, unknown>;
  return request;
}

function validId(id: unknown): id is RequestId {
  return (typeof id === "string" && id !== "") || typeof id === "number";
}
