import { RpcError } from "../../errors.js";
import { type CallRequest, type Handler, type JsonObject, targetName } from "../../hub/call-pipeline.js";
import { ErrorCode } from "../../protocol/error-codes.js";

/**
 * A forwarded method with no handler of its own (a row added to the method table): sent to
 * the server its target names, with the name or URI the client used mapped to the server's
 * own. Failures stay wire errors (the fronts map typed errors): only tools answer with
 * `isError`.
 */
export async function forward(dispatch: Handler, request: CallRequest): Promise<JsonObject> {
  const { method, target, row } = request;
  if (target?.server === undefined) {
    const what = target === undefined ? `params.${row?.targetParam ?? "name"}` : targetName(target);
    throw new RpcError(ErrorCode.InvalidParams, `Invalid params: ${method} names no known target (${what})`);
  }
  return await dispatch(request);
}
