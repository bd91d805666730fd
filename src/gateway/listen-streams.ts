import type { RequestContext } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import type { ListKind } from "../protocol/list-changes.js";
import { META } from "../protocol/rev2026.js";

/** The notification types a 2026 client opts in to on `subscriptions/listen`. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

interface Listener {
  id: string | number;
  filter: SubscriptionFilter;
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
  readonly #listeners = new Set<Listener>();

  constructor(hub: Hub) {
    this.#hub = hub;
  }

  /** Open streams. */
  get size(): number {
    return this.#listeners.size;
  }

  /**
   * Serves a 2026 `subscriptions/listen`: acknowledges what it will honour, then
   * sends the matching notifications tagged with the listen's id until the request
   * is cancelled (its signal aborts). Resolves when the listen ends.
   */
  async listen(
    id: string | number,
    params: Record<string, unknown>,
    ctx: RequestContext,
    send: (method: string, params: Record<string, unknown>) => void,
  ): Promise<void> {
    const requested = (params.notifications ?? {}) as SubscriptionFilter;
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
    const tag = { [META.subscriptionId]: id };
    send("notifications/subscriptions/acknowledged", { _meta: tag, notifications: filter });
    const listener: Listener = { id, filter, send: (method, p) => send(method, { ...p, _meta: tag }) };
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

  /** Sends list changes of `kinds` to the streams that asked for them. */
  listChanged(kinds: readonly ListKind[]): void {
    for (const [flag, method] of listChangedMethods(kinds)) {
      for (const listener of this.#listeners) if (listener.filter[flag] === true) listener.send(method, {});
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
