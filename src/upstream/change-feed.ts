import type { RpcConnection } from "../protocol/rpc-connection.js";
import type { Negotiated } from "./negotiate.js";

/**
 * The 2026 way to hear about changes: one `subscriptions/listen` request kept open,
 * asking for the list changes the server advertises and for updates of the watched
 * resources. Its filter is fixed per request, so a change of watched resources
 * replaces the listen with a new one. The notifications themselves arrive through the
 * connection like any other.
 */
class ChangeListener {
  readonly #connection: RpcConnection;
  readonly #capabilities: Record<string, unknown>;
  readonly #uris: ReadonlySet<string>;
  #controller: AbortController | undefined;

  constructor(connection: RpcConnection, capabilities: Record<string, unknown>, uris: ReadonlySet<string>) {
    this.#connection = connection;
    this.#capabilities = capabilities;
    this.#uris = uris;
  }

  /** (Re)opens the listen with the current filter; does nothing when there is nothing to hear. */
  refresh(): void {
    this.#controller?.abort("filter changed");
    this.#controller = undefined;
    const caps = this.#capabilities as {
      tools?: { listChanged?: boolean };
      prompts?: { listChanged?: boolean };
      resources?: { listChanged?: boolean; subscribe?: boolean };
    };
    const notifications: Record<string, unknown> = {};
    if (caps.tools?.listChanged === true) notifications.toolsListChanged = true;
    if (caps.prompts?.listChanged === true) notifications.promptsListChanged = true;
    if (caps.resources?.listChanged === true) notifications.resourcesListChanged = true;
    if (caps.resources?.subscribe === true && this.#uris.size > 0)
      notifications.resourceSubscriptions = [...this.#uris];
    if (Object.keys(notifications).length === 0) return;
    const controller = new AbortController();
    this.#controller = controller;
    // No timeout: it stays open until replaced, stopped, or the connection ends.
    this.#connection
      .request("subscriptions/listen", { notifications }, { timeout: 0, signal: controller.signal })
      .catch(() => {
        // Ended by us, by the server, or with the connection; a reconnect opens a new one.
      });
  }

  stop(): void {
    this.#controller?.abort("stopped");
    this.#controller = undefined;
  }
}

/**
 * How one upstream hears about changes, on whichever protocol generation it speaks:
 * the 2026 listen, or 2025 `resources/subscribe` for watched resources (2025 list
 * changes need no asking). Watched resources are kept across reconnects.
 */
export class ChangeFeed {
  readonly #watched = new Set<string>();
  #connection: RpcConnection | undefined;
  #negotiated: Negotiated | undefined;
  #listener: ChangeListener | undefined;
  #timeout: number;

  constructor(timeout: number) {
    this.#timeout = timeout;
  }

  /** Called on every (re)connection: opens the listen, or renews 2025 subscriptions. */
  async attach(connection: RpcConnection, negotiated: Negotiated, signal?: AbortSignal): Promise<void> {
    this.detach();
    this.#connection = connection;
    this.#negotiated = negotiated;
    if (negotiated.stateless) {
      this.#listener = new ChangeListener(connection, negotiated.capabilities, this.#watched);
      this.#listener.refresh();
      return;
    }
    if (!this.#canSubscribe()) return;
    await Promise.all(
      [...this.#watched].map((uri) =>
        connection
          .request("resources/subscribe", { uri }, { timeout: this.#timeout, signal })
          .catch(() => {}),
      ),
    );
  }

  /** Starts hearing about a resource (kept for later connections too). */
  async watch(uri: string, signal?: AbortSignal): Promise<void> {
    if (this.#watched.has(uri)) return;
    this.#watched.add(uri);
    await this.#update(uri, "resources/subscribe", signal);
  }

  /** Stops hearing about a resource. */
  async unwatch(uri: string): Promise<void> {
    if (!this.#watched.delete(uri)) return;
    await this.#update(uri, "resources/unsubscribe").catch(() => {});
  }

  async #update(uri: string, method: string, signal?: AbortSignal): Promise<void> {
    const connection = this.#connection;
    if (connection === undefined || connection.closed) return;
    if (this.#negotiated?.stateless === true) this.#listener?.refresh();
    else if (this.#canSubscribe())
      await connection.request(method, { uri }, { timeout: this.#timeout, signal });
  }

  #canSubscribe(): boolean {
    return (
      (this.#negotiated?.capabilities.resources as { subscribe?: boolean } | undefined)?.subscribe === true
    );
  }

  /** The connection is gone or going: stop listening on it. */
  detach(): void {
    this.#listener?.stop();
    this.#listener = undefined;
    this.#connection = undefined;
  }
}
