import { ErrorCode } from "./error-codes.js";
import { RawJson } from "./raw-json.js";
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

/**
 * A JSON-RPC message as JSON text, as `JSON.stringify` writes it but with the envelope written
 * here: `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` and the answers' `result` or `error`.
 * Every message of a call is serialised twice on its way (the request to the server, the answer
 * to the client), and `JSON.stringify` looks up `toJSON` and escapes each key of the envelope
 * alike; only the members' values go through it here. A message with any other member, or one
 * that `JSON.stringify` would treat apart (`toJSON`, members set to `undefined`), is left to it.
 * The members come out in the order above, whatever order they were set in. A `result` that
 * is a {@link RawJson} is written as its text.
 *
 * @example
 * stringifyMessage({ jsonrpc: "2.0", id: 1, result: { content: [] } });
 * // '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}'
 */
export function stringifyMessage(message: object): string {
  const m = message as {
    jsonrpc?: unknown;
    id?: unknown;
    method?: unknown;
    params?: unknown;
    result?: unknown;
    error?: unknown;
    toJSON?: unknown;
  };
  if (m.jsonrpc !== "2.0" || m.toJSON !== undefined) return JSON.stringify(message);
  let members = 1;
  let text = '{"jsonrpc":"2.0"';
  const { id, method, params, result, error } = m;
  if (id !== undefined) {
    // A safe integer as it is; anything else (a string to escape) through JSON.stringify.
    text +=
      typeof id === "number" && Number.isSafeInteger(id) ? `,"id":${id}` : `,"id":${JSON.stringify(id)}`;
    members++;
  }
  // JSON.stringify answers undefined for a function or a symbol, which it would leave out of
  // the object: the general way then.
  if (method !== undefined) {
    const json = JSON.stringify(method) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"method":${json}`;
    members++;
  }
  if (params !== undefined) {
    const json = JSON.stringify(params) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"params":${json}`;
    members++;
  }
  if (result instanceof RawJson) {
    // A result relayed as it came: its text is JSON already (see readRawAnswer).
    text += `,"result":${result.text}`;
    members++;
  } else if (result !== undefined) {
    const json = JSON.stringify(result) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"result":${json}`;
    members++;
  }
  if (error !== undefined) {
    const json = JSON.stringify(error) as string | undefined;
    if (json === undefined) return JSON.stringify(message);
    text += `,"error":${json}`;
    members++;
  }
  // A member not written above, or one set to undefined, makes the counts differ: another shape.
  // (for-in also counts inherited enumerable keys; a message has none, and a count that differs
  // only costs the general way.)
  let keys = 0;
  for (const _ in message) keys++;
  return keys === members ? `${text}}` : JSON.stringify(message);
}
