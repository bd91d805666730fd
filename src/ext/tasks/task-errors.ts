import { RpcError } from "../../errors.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import { TASKS_EXTENSION } from "../../protocol/tasks.js";

/**
 * The -32021 error of a request that needs the extension and did not declare it (the tasks
 * methods, task notifications on `subscriptions/listen`), with the capability it lacks.
 */
export function missingTasksCapability(what: string): RpcError {
  return new RpcError(
    ErrorCode.MissingClientCapability,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension; declare it in _meta["io.modelcontextprotocol/clientCapabilities"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The -32602 answer to a task id that names no task this caller may see. */
export function unknownTask(taskId: unknown): RpcError {
  return new RpcError(
    ErrorCode.InvalidParams,
    `Failed to retrieve task: Task not found (${typeof taskId === "string" ? taskId : "taskId must be a string"})`,
  );
}
