/**
 * The experimental tasks of 2025-11-25 as the gateway serves them: a server that takes
 * task-augmented `tools/call`, the `{ task }` result it answers with, and the `_meta` key that
 * ties a `tasks/result` answer to its task.
 */

/** The 2025-11-25 `_meta` key that ties a message (a `tasks/result` answer) to its task. */
export const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** Whether a 2025-11-25 server takes task-augmented `tools/call` (`tasks.requests.tools.call`). */
export function takesRev2025Tasks(capabilities: Record<string, unknown> | undefined): boolean {
  const tasks = capabilities?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/** The task of a 2025-11-25 `CreateTaskResult` (`{ task: { taskId, ... } }`), if the result is one. */
export function rev2025CreatedTask(result: Record<string, unknown>): { taskId: string } | undefined {
  const task = result.task as { taskId?: unknown } | undefined;
  if (typeof task !== "object" || task === null || typeof task.taskId !== "string") return undefined;
  return task as { taskId: string };
}
