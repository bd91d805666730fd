import { setTimeout as delay } from "node:timers/promises";
import { AbortedError, McplexError, RpcError } from "../errors.js";
import { ErrorCode } from "./error-codes.js";
import type { InputRequestHandler } from "./input-required.js";
import { type DetailedTask, isTerminal } from "./tasks.js";

/** The poll interval when the server suggests none (ms). */
const DEFAULT_POLL_MS = 1000;
/** Bounds of the server's `pollIntervalMs`: never a busy loop, never a minute of nothing. */
const MIN_POLL_MS = 10;
const MAX_POLL_MS = 30_000;

/** Options of {@link awaitTask}. */
export interface AwaitTaskOptions {
  /** The server holding the task (for errors). */
  server: string;
  /** Sends `tasks/get`, `tasks/update` or `tasks/cancel` to that server. */
  send(
    method: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Stops waiting; the task is then cancelled at the server (best effort). */
  signal?: AbortSignal | undefined;
  /** Answers the task's input requests (elicitation, sampling); without it such a task fails. */
  handler?: InputRequestHandler | undefined;
  /** Told of every poll that found the task not done yet (a waiting caller's progress). */
  onPoll?: ((task: DetailedTask, polls: number) => void) | undefined;
}

/**
 * Waits for a task (the tasks extension's `resultType: "task"`) as a client that wants only the
 * result does: polls `tasks/get` as the task's `pollIntervalMs` says, answers its input requests
 * through the handler with `tasks/update` (each key once), and resolves with the result the
 * call would have had. A failed task rejects with its JSON-RPC error, a cancelled one with
 * `TASK_CANCELLED`. A wait that ends before the task does (the signal aborted, a question the
 * handler could not answer, a server that could not be asked) cancels it (`tasks/cancel`).
 *
 * @example
 * const result = await awaitTask(created, { server: "jobs", send: (m, p, s) => upstream.request(m, p, { signal: s }) });
 */
export async function awaitTask(
  created: DetailedTask,
  options: AwaitTaskOptions,
): Promise<Record<string, unknown>> {
  const { server, signal } = options;
  const taskId = created.taskId;
  const answered = new Set<string>();
  let task = created;
  let polls = 0;
  try {
    for (;;) {
      if (task.status === "input_required") await answerInput(task, answered, options);
      else await delay(pollInterval(task), undefined, signal === undefined ? {} : { signal });
      const seen = (await options.send("tasks/get", { taskId }, signal)) as unknown as DetailedTask;
      task = { ...seen, taskId };
      if (isTerminal(task.status)) break;
      options.onPoll?.(task, ++polls);
    }
  } catch (error) {
    // Nobody waits for the task any more (the caller gave up, its answer to the task's question
    // failed, the server could not be asked): it need not go on (the server decides). Waited
    // for, within the request's timeout, so a process that ends next has sent it.
    await options.send("tasks/cancel", { taskId }).catch(() => {});
    if (signal?.aborted !== true || error instanceof AbortedError) throw error;
    throw new AbortedError(
      `${server}: aborted while waiting for task ${taskId}`,
      { server },
      { cause: error },
    );
  }
  return outcome(task, server);
}

function pollInterval(task: DetailedTask): number {
  const ms = typeof task.pollIntervalMs === "number" ? task.pollIntervalMs : DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, ms));
}

/** Answers the input requests not answered yet, all in one `tasks/update`. */
async function answerInput(
  task: DetailedTask,
  answered: Set<string>,
  options: AwaitTaskOptions,
): Promise<void> {
  const { server, handler } = options;
  const asked = Object.entries(task.inputRequests ?? {}).filter(([key]) => !answered.has(key));
  if (asked.length === 0) {
    // Answered already; the server has not moved on yet.
    await delay(
      pollInterval(task),
      undefined,
      options.signal === undefined ? {} : { signal: options.signal },
    );
    return;
  }
  if (handler === undefined) {
    const methods = asked.map(([, r]) => String(r.method)).join(", ");
    throw new McplexError(
      "PROTOCOL_ERROR",
      `${server}: the task needs input (${methods}) but no handler was given; pass onServerRequest to the hub or the call`,
      { server, hint: "give the hub an onServerRequest handler" },
    );
  }
  const signal = options.signal ?? new AbortController().signal;
  const answers = await Promise.all(
    asked.map(async ([key, request]) => {
      const params =
        typeof request.params === "object" && request.params !== null
          ? (request.params as Record<string, unknown>)
          : {};
      return [key, await handler({ server, method: String(request.method), params, signal })] as const;
    }),
  );
  for (const [key] of answers) answered.add(key);
  await options.send(
    "tasks/update",
    { taskId: task.taskId, inputResponses: Object.fromEntries(answers) },
    options.signal,
  );
}

/** What a terminal task gives its caller: the result, or the error the call would have had. */
function outcome(task: DetailedTask, server: string): Record<string, unknown> {
  if (task.status === "completed") {
    if (typeof task.result !== "object" || task.result === null) {
      throw new McplexError("PROTOCOL_ERROR", `${server}: task ${task.taskId} completed without a result`, {
        server,
      });
    }
    return task.result;
  }
  if (task.status === "failed") {
    const error = task.error ?? {};
    throw new RpcError(
      typeof error.code === "number" ? error.code : ErrorCode.InternalError,
      typeof error.message === "string" ? error.message : `task ${task.taskId} failed`,
      error.data,
      server,
    );
  }
  const why = task.statusMessage === undefined ? "" : `: ${task.statusMessage}`;
  throw new McplexError("TASK_CANCELLED", `${server}: task ${task.taskId} was cancelled${why}`, { server });
}
