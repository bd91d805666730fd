import type { CallRequest, Handler, JsonObject } from "../../hub/call-pipeline.js";
import type { GatewayTasks } from "./gateway-tasks.js";

/**
 * A tasks method's handler as the gateway's method table calls it: with the gateway's parts,
 * of which it reads the tasks and the dispatch into the hub's pipeline only (so this folder
 * needs nothing of the gateway).
 */
export type TaskMethod = (
  request: CallRequest,
  gateway: { readonly tasks: GatewayTasks; readonly dispatch: Handler },
) => Promise<JsonObject>;

/** A `task` row: sent to the server its handle names, with the server's own id (see `GatewayTasks.route`). */
export const routeTask: TaskMethod = (request, { tasks, dispatch }) => tasks.route(request, dispatch);

/**
 * The methods of the tasks extension (2026) and of 2025-11-25's experimental tasks, by name;
 * the gateway's table takes them as they are. A row an embedder adds with a `task` target is
 * answered by {@link routeTask} too.
 */
export const TASK_METHODS: Readonly<Record<string, TaskMethod>> = {
  "tasks/get": routeTask,
  "tasks/update": routeTask,
  "tasks/cancel": routeTask,
  "tasks/result": routeTask,
  // 2025-11-25: the caller's own tasks, never forwarded whole.
  "tasks/list": (request, { tasks }) => tasks.list(request),
};
