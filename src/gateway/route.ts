import { RpcError } from "../errors.js";
import type { GatewayTasks } from "../ext/tasks/gateway-tasks.js";
import { routeTask } from "../ext/tasks/task-methods.js";
import type { Handler } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { forward } from "./methods/forward.js";
import type { GatewayIdentity, MethodContext } from "./methods/method-handler.js";
import { METHOD_HANDLERS } from "./methods/method-handlers.js";
import { toolError } from "./methods/tool-error.js";

/**
 * The end of the pipeline: the gateway's answer to every method, from its handler in
 * `methods/` (see `METHOD_HANDLERS`). Answers from the hub's catalog, with the target the
 * request resolved to; names and URIs are mapped both ways by the hub, task ids to and from
 * handles by `tasks`.
 */
export function route(hub: Hub, identity: GatewayIdentity, tasks: GatewayTasks, dispatch: Handler): Handler {
  const answer = table({ hub, identity, tasks, dispatch });
  // Not async: a well-formed call of a known tool hands on the hub's promise with one `then`,
  // not an async function's promise and await around it. Anything else takes the table's way.
  return (request) => {
    if (request.method !== "tools/call") return answer(request);
    const { params, target } = request;
    const args = params.arguments;
    if (
      target?.kind !== "tool" ||
      target.tool === undefined ||
      typeof params.name !== "string" ||
      params.name === "" ||
      (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args)))
    )
      return answer(request);
    return dispatch(request).then(
      (result) =>
        result.resultType === "task" || result.task !== undefined ? tasks.created(request, result) : result,
      toolError,
    );
  };
}

/**
 * The method table: a method's handler; else, for a row an embedder added, its task's server
 * (a `task` row) or its target's (a forwarded row); else method not found.
 */
function table(gateway: MethodContext): Handler {
  return async (request) => {
    const handler = METHOD_HANDLERS.get(request.method);
    if (handler !== undefined) return await handler(request, gateway);
    if (request.row?.target === "task") return await routeTask(request, gateway);
    if (request.row?.forwarded === true) return await forward(gateway.dispatch, request);
    throw new RpcError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
  };
}
