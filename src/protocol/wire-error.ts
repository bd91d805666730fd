import { McplexError, RpcError } from "../errors.js";
import { ErrorCode } from "./error-codes.js";

/** The `error` member of a JSON-RPC answer. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/** Local error codes that mean the caller named something wrong (its params), not that mcplex failed. */
const CALLER_MISTAKES: ReadonlySet<string> = new Set([
  "TOOL_NOT_FOUND",
  "RESOURCE_NOT_FOUND",
  "PROMPT_NOT_FOUND",
  "CONFIG_INVALID",
]);

/**
 * Any thrown value as the `error` member of an answer: a wire error as it is, a local
 * error as invalid params (a name that is not there) or internal error, with the first
 * line of its message (and `data: { code, retryAt }` when it says when to retry); anything
 * else as an internal error. The one mapper of every front
 * and of the upstream connection's answers to servers.
 */
export function toWireError(error: unknown): WireError {
  if (error instanceof RpcError) return error.toJSON();
  if (error instanceof McplexError) {
    const code = CALLER_MISTAKES.has(error.code) ? ErrorCode.InvalidParams : ErrorCode.InternalError;
    const wire: WireError = { code, message: error.message.split("\n")[0]! };
    // A retryable refusal (a quota) says when to try again, for programs as well as people.
    if (error.retryAt !== undefined) wire.data = { code: error.code, retryAt: error.retryAt };
    return wire;
  }
  if (error instanceof Error) return { code: ErrorCode.InternalError, message: error.message };
  return { code: ErrorCode.InternalError, message: String(error) };
}

/** The answer to a message that is not JSON, on every front (id null: none could be read). */
export function parseErrorAnswer(error: unknown): { jsonrpc: "2.0"; id: null; error: WireError } {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    jsonrpc: "2.0",
    id: null,
    error: { code: ErrorCode.ParseError, message: `Parse error: ${reason}` },
  };
}
