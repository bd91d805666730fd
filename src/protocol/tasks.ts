/**
 * The tasks extension on the wire (`io.modelcontextprotocol/tasks`, SEP-2663, with 2026-07-28):
 * a `tools/call` may be answered with a task (`resultType: "task"`) that the client polls with
 * `tasks/get`, feeds with `tasks/update` and stops with `tasks/cancel`. Here is what a client of
 * task servers reads (the hub declares the extension to its servers and waits for their tasks,
 * see `task-polling.ts`), low enough for the hub to import; the gateway's serving of tasks to
 * its own clients (handles, the 2025-11-25 experimental tasks, its errors) is in src/ext/tasks/.
 */

/** The extension's identifier, in capabilities' `extensions`. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

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
