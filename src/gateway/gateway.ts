import type { Hub, HubEvent } from "../hub/hub.js";
import type { ListKind } from "../protocol/list-changes.js";
import { type Channel, ClientSession } from "./client-session.js";
import { Dispatcher, type GatewayIdentity, type RequestSample, serverCapabilities } from "./dispatcher.js";
import { InputParking } from "./input-parking.js";
import type { RequestContext } from "./request-context.js";

/** Options of a {@link Gateway}. */
export interface GatewayOptions {
  /** Name and version the gateway reports; instructions for the model. */
  identity?: Partial<GatewayIdentity>;
  /** How long a call waiting for a 2026 client's input is kept (ms). Default 10 minutes. */
  inputWaitMs?: number;
  /**
   * Settles when the hub's first start is over. Requests wait for it, but at most
   * {@link readyWait}: a client's first `tools/list` sees every server that starts quickly,
   * and one slow server never hides the others (they are announced when they are ready).
   */
  ready?: Promise<unknown>;
  /** How long requests wait for {@link ready} at most (ms). Default 1000. */
  readyWait?: number;
}

/** Default of {@link GatewayOptions.readyWait}: clients give a first list a few seconds. */
export const DEFAULT_READY_WAIT_MS = 1000;

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

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

/**
 * The catalog of a hub served as one MCP server: sessions of 2025 clients,
 * stateless requests and `subscriptions/listen` streams of 2026 clients, and the
 * hub's changes delivered to whoever asked for them. Fronts (stdio, HTTP,
 * WebSocket) only move messages.
 */
export class Gateway {
  readonly hub: Hub;
  readonly dispatcher: Dispatcher;
  /**
   * Settles when requests may be served: when the hub's first start is over, or
   * {@link GatewayOptions.readyWait} after the gateway was made, whichever comes first.
   */
  readonly ready: Promise<unknown>;
  /** `true` once {@link ready} has settled (saves an await per request after that). */
  isReady = false;
  readonly #identity: GatewayIdentity;
  readonly #sessions = new Set<ClientSession>();
  readonly #listeners = new Set<Listener>();
  readonly #offHub: () => void;

  constructor(hub: Hub, options: GatewayOptions = {}) {
    this.hub = hub;
    this.#identity = { name: "mcplex", version: "0.1.0", ...options.identity };
    this.dispatcher = new Dispatcher(
      hub,
      this.#identity,
      new InputParking(options.inputWaitMs === undefined ? {} : { parkMs: options.inputWaitMs }),
    );
    this.#offHub = hub.on((event) => this.#onHubEvent(event));
    const started = (options.ready ?? Promise.resolve()).catch(() => {});
    const waitMs = options.readyWait ?? DEFAULT_READY_WAIT_MS;
    this.ready = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, waitMs);
      timer.unref();
      void started.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    void this.ready.then(() => {
      this.isReady = true;
    });
  }

  /** Name, version and instructions the gateway reports. */
  get identity(): Readonly<GatewayIdentity> {
    return this.#identity;
  }

  /** Receives one sample per request handled; returns the unsubscribe function. */
  observe(observer: (sample: RequestSample) => void): () => void {
    return this.dispatcher.observe(observer);
  }

  /** Sessions open now. */
  get sessions(): ReadonlySet<ClientSession> {
    return this.#sessions;
  }

  /** Open `subscriptions/listen` streams. */
  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Starts a session on a channel (a stdio pipe, a WebSocket, an HTTP session). */
  openSession(channel: Channel, options: { profile?: string } = {}): ClientSession {
    const session = new ClientSession(this, channel, options);
    this.#sessions.add(session);
    return session;
  }

  /** @internal Called by a session when it ends. */
  sessionClosed(session: ClientSession): void {
    this.#sessions.delete(session);
    void this.hub.releaseClient(session).catch(() => {});
    for (const uri of session.subscriptions) {
      void this.hub
        .unsubscribeResource(uri, session.profile === undefined ? {} : { profile: session.profile })
        .catch(() => {});
    }
  }

  /** The `initialize` result for a 2025 client. */
  initializeResult(protocolVersion: string): Record<string, unknown> {
    const result: Record<string, unknown> = {
      protocolVersion,
      capabilities: serverCapabilities(false),
      serverInfo: { name: this.#identity.name, version: this.#identity.version },
    };
    if (this.#identity.instructions !== undefined) result.instructions = this.#identity.instructions;
    return result;
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
      const ok = await this.hub.subscribeResource(uri, profile).then(
        () => true,
        () => false,
      );
      if (ok) uris.push(uri);
    }
    if (uris.length > 0) filter.resourceSubscriptions = uris;
    const tag = { [SUBSCRIPTION_ID]: id };
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
      for (const uri of uris) void this.hub.unsubscribeResource(uri, profile).catch(() => {});
    }
  }

  #onHubEvent(event: HubEvent): void {
    switch (event.type) {
      case "catalog-changed":
        this.#listChanged(event.kinds);
        return;
      case "resource-updated":
        this.#resourceUpdated(event.uri);
        return;
      case "notification":
        if (event.method === "notifications/message" && event.params !== undefined) {
          this.dispatcher.relayLog(event.server, event.params);
        }
        return;
      default:
        return;
    }
  }

  #listChanged(kinds: ListKind[]): void {
    const methods: Array<[keyof SubscriptionFilter, string]> = [];
    if (kinds.includes("tools")) methods.push(["toolsListChanged", "notifications/tools/list_changed"]);
    if (kinds.includes("prompts")) methods.push(["promptsListChanged", "notifications/prompts/list_changed"]);
    if (kinds.includes("resources") || kinds.includes("resourceTemplates")) {
      methods.push(["resourcesListChanged", "notifications/resources/list_changed"]);
    }
    for (const [flag, method] of methods) {
      for (const session of this.#sessions) if (session.initialized) session.notify(method, {});
      for (const listener of this.#listeners) if (listener.filter[flag] === true) listener.send(method, {});
    }
  }

  #resourceUpdated(uri: string): void {
    for (const session of this.#sessions) {
      if (session.subscriptions.has(uri)) session.notify("notifications/resources/updated", { uri });
    }
    for (const listener of this.#listeners) {
      if (listener.filter.resourceSubscriptions?.includes(uri) === true) {
        listener.send("notifications/resources/updated", { uri });
      }
    }
  }

  /** Ends every session and listen; parked calls are cancelled. The hub stays open. */
  close(): void {
    this.#offHub();
    for (const session of [...this.#sessions]) session.close();
    this.dispatcher.parking.close();
  }
}
