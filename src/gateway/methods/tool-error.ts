import { McplexError, NotFoundError, RpcError } from "../../errors.js";
import type { JsonObject } from "../../hub/call-pipeline.js";
import { setToolErrorCause } from "../../hub/tool-error-cause.js";
import { ErrorCode } from "../../protocol/error-codes.js";

/**
 * Failures of a tool call that the model should read (server down, timeout) become tool
 * results with `isError`; errors the server answered pass through as wire errors.
 */
export function toolError(error: unknown): JsonObject {
  if (error instanceof RpcError) throw error;
  if (error instanceof NotFoundError) throw new RpcError(ErrorCode.InvalidParams, error.message);
  if (error instanceof McplexError) {
    const result: JsonObject = {
      isError: true,
      content: [{ type: "text", text: error.message.split("\n")[0] }],
    };
    // When to try again, for programs (a quota, a server reconnecting), as code mode's CODE_BUSY says it.
    if (error.retryAt !== undefined)
      result._meta = { "mcplex/error": { code: error.code, retryAt: error.retryAt } };
    setToolErrorCause(result, error);
    return result;
  }
  throw error;
}
