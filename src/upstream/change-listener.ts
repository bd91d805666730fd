import type { RpcConnection } from "./rpc-connection.js";

/**
 * The 2026 way to hear about changes: one `subscriptions/listen` request kept open,
 * asking for the list changes the server advertises and for updates of the watched
 * resources. Its filter is fixed per request, so a change of watched resources
 * replaces the listen with a new one. The notifications themselves arrive through the
 * connection like any other.
 */
export class ChangeListener {
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
