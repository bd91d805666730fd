import { userRefOf } from "../credentials/user-ref.js";
import { missingTasksCapability } from "../ext/tasks/task-errors.js";
import type { RequestContext } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import type { ListKind } from "../protocol/list-changes.js";
import { META } from "../protocol/rev2026.js";
import { declaresTasks } from "../protocol/tasks.js";
import type { TaskTargets } from "./call-request.js";

/** The notification types a 2026 client opts in to on `subscriptions/listen`. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks (by handle) whose `notifications/tasks` the client wants (the tasks extension). */
  taskIds?: string[];
}

/**
 * How long a listen for tasks waits for their server's acknowledgement: a server that does not
 * acknowledge agreed to nothing, and its tasks are left out of the client's acknowledgement.
 */
const ACK_WAIT_MS = 5000;

/** A server's listen for tasks, waiting for the server to say which it agreed to. */
interface AwaitedAck {
  readonly server: string;
  readonly ids: ReadonlySet<string>;
  agreed(ids: unknown[]): void;
}

interface Listener {
  id: string | number;
  filter: SubscriptionFilter;
  /** The signed-in user who listens (`UserRef.key`), if any. */
  user: string | undefined;
  /** The tasks it hears about: per server, the server's task id and the client's handle. */
  tasks: Map<string, Map<string, string>> | undefined;
  send: (method: string, params: Record<string, unknown>) => void;
}

/** The list-changed notifications, each with the filter flag a listen opts in to it by. */
export function listChangedMethods(kinds: readonly ListKind[]): Array<[keyof SubscriptionFilter, string]> {
  const methods: Array<[keyof SubscriptionFilter, string]> = [];
  if (kinds.includes("tools")) methods.push(["toolsListChanged", "notifications/tools/list_changed"]);
  if (kinds.includes("prompts")) methods.push(["promptsListChanged", "notifications/prompts/list_changed"]);
  if (kinds.includes("resources") || kinds.includes("resourceTemplates")) {
    methods.push(["resourcesListChanged", "notifications/resources/list_changed"]);
  }
  return methods;
}

/**
 * The open `subscriptions/listen` streams of 2026 clients, each with what it asked to hear:
 * list changes, and updates of the resources it named (subscribed upstream while it lasts).
 */
export class ListenStreams {
  readonly #hub: Hub;
  readonly #tasks: TaskTargets;
  readonly #listeners = new Set<Listener>();
  /** Servers' listens for tasks that have not been acknowledged yet. */
  readonly #awaitingAck = new Set<AwaitedAck>();

  constructor(hub: Hub, tasks: TaskTargets) {
    this.#hub = hub;
    this.#tasks = tasks;
  }

  /** Open streams. */
  get size(): number {
    return this.#listeners.size;
  }

  /**
   * Serves a 2026 `subscriptions/listen`: acknowledges what it will honour, then
   * sends the matching notifications tagged with the listen's id until the request
   * is cancelled (its signal aborts). Resolves when the listen ends. Throws at once (before
   * anything is sent) when it asks for task notifications without declaring the extension.
   */
  listen(
    id: string | number,
    params: Record<string, unknown>,
    ctx: RequestContext,
    send: (method: string, params: Record<string, unknown>) => void,
  ): Promise<void> {
    const requested = (params.notifications ?? {}) as SubscriptionFilter;
    const taskIds = Array.isArray(requested.taskIds)
      ? requested.taskIds.filter((t): t is string => typeof t === "string")
      : [];
    if (taskIds.length > 0 && !declaresTasks(ctx.clientCapabilities))
      throw missingTasksCapability("notifications/tasks on subscriptions/listen");
    return this.#listen(id, requested, taskIds, ctx, send);
  }

  async #listen(
    id: string | number,
    requested: SubscriptionFilter,
    taskIds: string[],
    ctx: RequestContext,
    send: (method: string, params: Record<string, unknown>) => void,
  ): Promise<void> {
    const filter: SubscriptionFilter = {};
    if (requested.toolsListChanged === true) filter.toolsListChanged = true;
    if (requested.promptsListChanged === true) filter.promptsListChanged = true;
    if (requested.resourcesListChanged === true) filter.resourcesListChanged = true;
    const profile = ctx.profile === undefined ? {} : { profile: ctx.profile };
    const uris: string[] = [];
    for (const uri of Array.isArray(requested.resourceSubscriptions) ? requested.resourceSubscriptions : []) {
      if (typeof uri !== "string") continue;
      // URIs nobody serves are left out of the acknowledgement rather than failing the listen.
      const ok = await this.#hub.subscribeResource(uri, profile).then(
        () => true,
        () => false,
      );
      if (ok) uris.push(uri);
    }
    if (uris.length > 0) filter.resourceSubscriptions = uris;
    const tasks = taskIds.length === 0 ? undefined : await this.#watchTasks(taskIds, ctx);
    if (tasks !== undefined) filter.taskIds = [...tasks.values()].flatMap((byId) => [...byId.values()]);
    const tag = { [META.subscriptionId]: id };
    send("notifications/subscriptions/acknowledged", { _meta: tag, notifications: filter });
    const listener: Listener = {
      id,
      filter,
      user: userRefOf(ctx.identity)?.key,
      tasks,
      send: (method, p) => send(method, { ...p, _meta: tag }),
    };
    this.#listeners.add(listener);
    try {
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    } finally {
      this.#listeners.delete(listener);
      for (const uri of uris) void this.#hub.unsubscribeResource(uri, profile).catch(() => {});
    }
  }

  /**
   * The tasks a listen asked about, by server, that their server agreed to tell about: each
   * handle is opened for this caller (others are left out), and each server is asked for its
   * tasks' notifications on a listen of its own that lasts as long as the client's. Resolves
   * once every server acknowledged (or failed, or let {@link ACK_WAIT_MS} pass).
   */
  async #watchTasks(handles: string[], ctx: RequestContext): Promise<Map<string, Map<string, string>>> {
    const byServer = new Map<string, Map<string, string>>();
    for (const handle of handles) {
      const target = this.#tasks.target(handle, ctx);
      if (target?.kind !== "task" || target.server === undefined || target.taskId === undefined) continue;
      let ids = byServer.get(target.server);
      if (ids === undefined) {
        ids = new Map();
        byServer.set(target.server, ids);
      }
      ids.set(target.taskId, handle);
    }
    await Promise.all([...byServer].map(([server, ids]) => this.#listenUpstream(server, ids, ctx)));
    return byServer;
  }

  /** Opens a server's listen for `ids`; keeps in `ids` those it agreed to tell about. */
  #listenUpstream(server: string, ids: Map<string, string>, ctx: RequestContext): Promise<void> {
    const { signal, profile, clientCapabilities } = ctx;
    return new Promise((resolve) => {
      const waiting: AwaitedAck = {
        server,
        ids: new Set(ids.keys()),
        agreed: (agreed) => {
          clearTimeout(timer);
          this.#awaitingAck.delete(waiting);
          for (const id of [...ids.keys()]) if (!agreed.includes(id)) ids.delete(id);
          resolve();
        },
      };
      const timer = setTimeout(() => waiting.agreed([]), ACK_WAIT_MS);
      timer.unref();
      this.#awaitingAck.add(waiting);
      void this.#hub
        .forward(
          server,
          "subscriptions/listen",
          { notifications: { taskIds: [...ids.keys()] } },
          { signal, timeout: 0, clientCapabilities, ...(profile === undefined ? {} : { profile }) },
        )
        // Ended with the client's listen, or by the server: nothing more comes from it.
        .catch(() => waiting.agreed([]));
    });
  }

  /**
   * A server's acknowledgement of a listen: the listens for tasks waiting on it learn which of
   * their tasks it agreed to tell about (the server's own listen for list changes names none).
   */
  acknowledged(server: string, params: Record<string, unknown>): void {
    const agreed = (params.notifications as { taskIds?: unknown } | undefined)?.taskIds;
    if (!Array.isArray(agreed)) return;
    for (const waiting of this.#awaitingAck) {
      if (waiting.server === server && agreed.some((id) => waiting.ids.has(id))) waiting.agreed(agreed);
    }
  }

  /**
   * Sends a server's `notifications/tasks` to the streams that asked about that task, with the
   * client's handle in place of the server's id.
   */
  taskChanged(server: string, params: Record<string, unknown>): void {
    const taskId = params.taskId;
    if (typeof taskId !== "string") return;
    const { _meta: _, ...task } = params;
    for (const listener of this.#listeners) {
      const handle = listener.tasks?.get(server)?.get(taskId);
      if (handle !== undefined) listener.send("notifications/tasks", { ...task, taskId: handle });
    }
  }

  /** Sends list changes of `kinds` to the streams that asked for them (with `user`, that user's only). */
  listChanged(kinds: readonly ListKind[], user?: string): void {
    for (const [flag, method] of listChangedMethods(kinds)) {
      for (const listener of this.#listeners)
        if (listener.filter[flag] === true && (user === undefined || listener.user === user))
          listener.send(method, {});
    }
  }

  /** Sends a resource's update to the streams that named it. */
  resourceUpdated(uri: string): void {
    for (const listener of this.#listeners) {
      if (listener.filter.resourceSubscriptions?.includes(uri) === true) {
        listener.send("notifications/resources/updated", { uri });
      }
    }
  }
}
