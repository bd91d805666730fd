/**
 * The tasks extension on the wire (`io.modelcontextprotocol/tasks`, SEP-2663, with 2026-07-28):
 * a `tools/call` may be answered with a task (`resultType: "task"`) that the client polls with
 * `tasks/get`, feeds with `tasks/update` and stops with `tasks/cancel`; and the experimental
 * tasks of 2025-11-25 (`params.task`, `{ task }` results, `tasks/result`, `tasks/list`).
 */
import { RpcError } from "../errors.js";
import { ErrorCode } from "./error-codes.js";

/** The extension's identifier, in capabilities' `extensions`. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** The 2025-11-25 `_meta` key that ties a message (a `tasks/result` answer) to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** A task's statuses; the last three are terminal. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task as `tasks/get` and `notifications/tasks` show it (2026), with what its status inlines. */
export interface DetailedTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method?: unknown; params?: unknown }>;
  result?: Record<string, unknown>;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** Whether a status is terminal (`completed`, `failed`, `cancelled`). */
export function isTerminal(status: unknown): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** Whether capabilities (a 2026 request's, a server's) declare the tasks extension. */
export function declaresTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.extensions as Record<string, unknown> | undefined;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Whether a 2025-11-25 server takes task-augmented `tools/call` (`tasks.requests.tools.call`). */
export function takesRev2025Tasks(capabilities: Record<string, unknown> | undefined): boolean {
  const tasks = capabilities?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/** Capabilities already made with the extension added, by the capabilities they were made from. */
const withExtension = new WeakMap<Record<string, unknown>, Record<string, unknown>>();

/**
 * `capabilities` declaring the tasks extension too (the same object when they already do). Made
 * once per capabilities object: a 2025 session's, or the hub's, is the same on every call.
 */
export function withTasksExtension(capabilities: Record<string, unknown>): Record<string, unknown> {
  if (declaresTasks(capabilities)) return capabilities;
  let made = withExtension.get(capabilities);
  if (made === undefined) {
    const extensions = (capabilities.extensions as Record<string, unknown> | undefined) ?? {};
    made = { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
    withExtension.set(capabilities, made);
  }
  return made;
}

/** Whether a result is a 2026 `CreateTaskResult` (`resultType: "task"`). */
export function isTaskResult(result: unknown): result is DetailedTask & { resultType: "task" } {
  return (result as { resultType?: unknown } | null)?.resultType === "task";
}

/** The task of a 2025-11-25 `CreateTaskResult` (`{ task: { taskId, ... } }`), if the result is one. */
export function rev2025CreatedTask(result: Record<string, unknown>): { taskId: string } | undefined {
  const task = result.task as { taskId?: unknown } | undefined;
  if (typeof task !== "object" || task === null || typeof task.taskId !== "string") return undefined;
  return task as { taskId: string };
}

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
