import { RpcError } from "../../errors.js";
import type { GatewayTasks } from "../../ext/tasks/gateway-tasks.js";
import { routeTask, TASK_METHODS } from "../../ext/tasks/task-methods.js";
import type { Handler } from "../../hub/call-pipeline.js";
import type { Hub } from "../../hub/hub.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { COMPLETION_METHODS } from "./completion.js";
import { DISCOVER_METHODS } from "./discover.js";
import { forward } from "./forward.js";
import type { GatewayIdentity, MethodContext, MethodHandler, MethodHandlers } from "./method-handler.js";
import { PROMPT_METHODS } from "./prompts.js";
import { RESOURCE_METHODS } from "./resources.js";
import { SKILL_METHODS } from "./skills.js";
import { SUBSCRIPTION_METHODS } from "./subscriptions.js";
import { toolError } from "./tool-error.js";
import { TOOL_METHODS } from "./tools.js";

/**
 * The gateway's handlers, by method: one file per concept. A method the gateway answers itself
 * is a row of `protocol/method-table.ts` and a handler here; a forwarded row needs a handler
 * only to check its params first (a row without one is sent to the server its target names).
 * The methods a client session answers before the pipeline (`initialize`, `logging/setLevel`,
 * `subscriptions/listen`: see `client-session.ts`) have none.
 */
export const METHOD_HANDLERS: ReadonlyMap<string, MethodHandler> = handlerTable(
  DISCOVER_METHODS,
  TOOL_METHODS,
  PROMPT_METHODS,
  RESOURCE_METHODS,
  COMPLETION_METHODS,
  SUBSCRIPTION_METHODS,
  SKILL_METHODS,
  TASK_METHODS,
);

/** One table of the files' handlers; a method two files answer is a mistake said at load. */
function handlerTable(...files: MethodHandlers[]): ReadonlyMap<string, MethodHandler> {
  const table = new Map<string, MethodHandler>();
  for (const handlers of files) {
    for (const [method, handler] of Object.entries(handlers)) {
      if (table.has(method)) throw new TypeError(`${method} has two handlers in src/gateway/methods/`);
      table.set(method, handler);
    }
  }
  return table;
}

/**
 * The end of the pipeline: the gateway's answer to every method, from its handler in
 * `METHOD_HANDLERS`. Answers from the hub's catalog, with the target the
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
