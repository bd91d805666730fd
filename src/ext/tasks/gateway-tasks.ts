import { RpcError } from "../../errors.js";
import type {
  CallRequest,
  Handler,
  JsonObject,
  RequestContext,
  RequestTarget,
} from "../../hub/call-pipeline.js";
import type { Hub } from "../../hub/hub.js";
import { ErrorCode } from "../../protocol/error-codes.js";
import type { ServerRequestHandler } from "../../protocol/server-requests.js";
import { declaresTasks, isTaskResult } from "../../protocol/tasks.js";
import { RELATED_TASK, rev2025CreatedTask, takesRev2025Tasks } from "./rev2025-tasks.js";
import { missingTasksCapability, unknownTask } from "./task-errors.js";
import { TaskHandles, type TaskHandlesOptions, taskOwner } from "./task-handles.js";

/** 2025-11-25 tasks a caller's `tasks/list` shows at most (its newest). */
const LISTED_PER_OWNER = 100;
/** Callers whose 2025-11-25 tasks are remembered (the longest unseen forgotten first). */
const OWNERS = 10_000;

/** A 2025-11-25 task created through this gateway, as its server knows it. */
interface Rev2025Task {
  readonly server: string;
  readonly taskId: string;
}

/**
 * The tasks extension as the gateway serves it, for the method table's `task` rows and the
 * `tools/call` answers that create tasks: a server's task id goes out as a handle that names the
 * server and is bound to its caller ({@link TaskHandles}), and comes back in as the server's own
 * id. A handle that opens to nothing for this caller is an unknown task (-32602), and a 2026
 * request that did not declare the extension is refused first (-32021), as the spec orders.
 * 2025-11-25 callers' `tasks/list` lists their own tasks only.
 */
export class GatewayTasks {
  readonly handles: TaskHandles;
  readonly #hub: Hub;
  /** 2025-11-25 tasks per owner, by handle, for `tasks/list`. */
  readonly #rev2025 = new Map<string, Map<string, Rev2025Task>>();

  constructor(hub: Hub, options: TaskHandlesOptions = {}) {
    this.#hub = hub;
    this.handles = new TaskHandles(options);
  }

  /**
   * The target of a `task` row: the handle opened for this caller, to a server its profile still
   * reaches, on this replica; without `server` when it names nothing this caller may reach here.
   */
  target(value: unknown, ctx: RequestContext): RequestTarget | undefined {
    if (typeof value !== "string") return undefined;
    const opened = this.handles.open(value, taskOwner(ctx));
    if (opened === undefined || opened.replica !== this.handles.replica) return { kind: "task", name: value };
    const { catalog } = this.#hub;
    if (!catalog.servers().includes(opened.server) || !catalog.reaches(opened.server, ctx.profile))
      return { kind: "task", name: value };
    const target: RequestTarget = { kind: "task", name: value, server: opened.server, taskId: opened.taskId };
    return opened.tool === undefined ? target : { ...target, tool: opened.tool };
  }

  /**
   * A `tools/call` answer as the client gets it: a task its server created (2026
   * `resultType: "task"`, 2025-11-25 `{ task }`) with its id made a handle; anything else as it is.
   */
  created(request: CallRequest, result: JsonObject): JsonObject {
    const { target } = request;
    const server = target?.server;
    if (server === undefined) return result;
    const owner = taskOwner(request.context);
    // The handle names the tool the call resolved to, whatever name the client called it by.
    const tool = target?.kind === "tool" ? target.tool?.name : undefined;
    if (isTaskResult(result)) {
      return { ...result, taskId: this.handles.mint(server, String(result.taskId), owner, tool) };
    }
    const task = rev2025CreatedTask(result);
    if (task === undefined) return result;
    const handle = this.handles.mint(server, task.taskId, owner, tool);
    this.#remember(owner, handle, { server, taskId: task.taskId });
    return { ...result, task: { ...task, taskId: handle } };
  }

  /**
   * Answers a `task` row (`tasks/get`, `tasks/update`, `tasks/cancel`, 2025's `tasks/result`):
   * refused without the extension (2026) or for a handle this caller cannot open, else sent to
   * the task's server with its own id (through `dispatch`, the hub's), and the answer given back
   * with the handle in its place.
   */
  async route(request: CallRequest, dispatch: Handler): Promise<JsonObject> {
    const { context, target, method } = request;
    if (context.stateless && !declaresTasks(context.clientCapabilities)) throw missingTasksCapability(method);
    if (target?.kind !== "task" || target.server === undefined || target.taskId === undefined)
      throw unknownTask(request.params.taskId);
    let forwarded = request;
    const handler = request.callOptions.onServerRequest;
    if (!context.stateless && handler !== undefined) {
      // A 2025 server's requests for the task (on `tasks/result`) name it by its own id.
      const { taskId, name } = target;
      const relayed: ServerRequestHandler = (asked) =>
        handler({ ...asked, params: withHandle(asked.params, taskId, name) });
      forwarded = { ...request, callOptions: { ...request.callOptions, onServerRequest: relayed } };
    }
    let result: JsonObject;
    try {
      result = await dispatch(forwarded);
    } catch (error) {
      // The server's message may quote its own id: the client knows only the handle.
      if (error instanceof RpcError && error.message.includes(target.taskId)) {
        throw new RpcError(
          error.code,
          error.message.replaceAll(target.taskId, target.name),
          error.data,
          error.server,
        );
      }
      throw error;
    }
    return withHandle(result, target.taskId, target.name);
  }

  /**
   * 2025-11-25 `tasks/list`: the caller's own tasks (those created through this gateway with its
   * credential and profile), each as its server shows it now; tasks a server no longer knows are
   * forgotten. Other callers' tasks on the same servers are never listed.
   */
  async list(request: CallRequest): Promise<JsonObject> {
    const owner = taskOwner(request.context);
    const mine = this.#rev2025.get(owner);
    if (mine === undefined) return { tasks: [] };
    const { signal, profile } = request.context;
    const found = await Promise.all(
      [...mine].map(async ([handle, task]) => {
        try {
          const shown = await this.#hub.forward(
            task.server,
            "tasks/get",
            { taskId: task.taskId },
            profile === undefined ? { signal } : { signal, profile },
          );
          return { ...shown, taskId: handle };
        } catch (error) {
          if (error instanceof RpcError && error.code === ErrorCode.InvalidParams) mine.delete(handle);
          return undefined;
        }
      }),
    );
    return { tasks: found.filter((t) => t !== undefined) };
  }

  /**
   * Whether a server `profile` reaches declares the 2026 extension: then the gateway's
   * `server/discover` declares it too.
   */
  extended(profile: string | undefined): boolean {
    return this.#someServer(profile, declaresTasks);
  }

  /** Whether a server `profile` reaches takes 2025-11-25 task-augmented `tools/call`. */
  takesRev2025(profile: string | undefined): boolean {
    return this.#someServer(profile, takesRev2025Tasks);
  }

  #someServer(profile: string | undefined, test: (caps: Record<string, unknown> | undefined) => boolean) {
    const { catalog } = this.#hub;
    return catalog
      .servers()
      .some((name) => catalog.reaches(name, profile) && test(this.#hub.serverDetails(name)?.capabilities));
  }

  #remember(owner: string, handle: string, task: Rev2025Task): void {
    let mine = this.#rev2025.get(owner);
    if (mine === undefined) {
      if (this.#rev2025.size >= OWNERS) this.#rev2025.delete(this.#rev2025.keys().next().value!);
      mine = new Map();
    } else this.#rev2025.delete(owner);
    this.#rev2025.set(owner, mine);
    mine.set(handle, task);
    if (mine.size > LISTED_PER_OWNER) mine.delete(mine.keys().next().value!);
  }
}

/**
 * `result` (or a server request's params) with `taskId`, and 2025's related-task `_meta`, naming
 * the handle instead of the server's id.
 */
function withHandle(result: JsonObject, taskId: string, handle: string): JsonObject {
  let shaped = result;
  if (result.taskId === taskId) shaped = { ...result, taskId: handle };
  const meta = result._meta as Record<string, unknown> | undefined;
  const related = meta?.[RELATED_TASK] as { taskId?: unknown } | undefined;
  if (related?.taskId === taskId) {
    shaped = { ...shaped, _meta: { ...meta, [RELATED_TASK]: { ...related, taskId: handle } } };
  }
  return shaped;
}
