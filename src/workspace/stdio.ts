import type { Readable, Writable } from "node:stream";
import type { JSONRPCMessage, Transport, TransportSendOptions } from "@modelcontextprotocol/server";
import { type StdioServerHandle, StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { Permissions } from "./permissions.js";
import { ResourceWatcher } from "./resource-watcher.js";
import { resolveResourceUri } from "./resources.js";
import { RootWall } from "./root-wall.js";
import { createWorkspaceServer, type WorkspaceServerOptions } from "./workspace-server.js";

/** Options of {@link serveWorkspaceStdio}: the server's, plus the streams and an error callback. */
export interface ServeWorkspaceStdioOptions extends WorkspaceServerOptions {
  stdin?: Readable;
  stdout?: Writable;
  /** Out-of-band errors (never written to stdout). */
  onerror?: (error: Error) => void;
}

/**
 * Serve the workspace over stdio for clients of both protocol generations: a 2025 `initialize`
 * pins a 2025-era instance, a 2026-07-28 request a stateless one (the SDK's `serveStdio` decides).
 * `subscriptions/listen` (2026) is answered by the SDK's entry; this entry watches the files
 * such a listen names, so their changes reach the stream.
 *
 * @example
 * const handle = serveWorkspaceStdio({ root: process.cwd(), allowWrite: false });
 * process.on("SIGTERM", () => handle.close());
 */
export function serveWorkspaceStdio(options: ServeWorkspaceStdioOptions): StdioServerHandle {
  const { stdin, stdout, onerror, ...serverOptions } = options;
  const wall = new RootWall(options.root, new Permissions(options.rules ?? [], options.allowWrite ?? false));
  const watcher = new ResourceWatcher();
  const inner = new StdioServerTransport(stdin, stdout);
  const transport = new ListenWatchingTransport(inner, {
    onListen: (id, uris) => {
      // Synchronous, before the SDK's entry acknowledges the listen: no change slips through.
      for (const uri of uris) {
        try {
          watcher.subscribe(`listen:${id}`, uri, resolveResourceUri(wall, uri).abs);
        } catch {
          // Not ours to watch (outside the root, denied): the stream simply never carries it.
        }
      }
    },
    onCancel: (id) => watcher.unsubscribe(`listen:${id}`),
    onClose: () => watcher.close(),
  });
  return serveStdio(() => createWorkspaceServer({ ...serverOptions, watcher }), {
    transport,
    ...(onerror && { onerror }),
  });
}

interface ListenHooks {
  onListen(id: string | number, uris: string[]): void;
  onCancel(id: string | number): void;
  onClose(): void;
}

/** A pass-through transport that notes `subscriptions/listen` requests and their cancellation. */
class ListenWatchingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];

  constructor(
    private readonly inner: Transport,
    private readonly hooks: ListenHooks,
  ) {
    inner.onmessage = (message, extra) => {
      this.peek(message);
      this.onmessage?.(message, extra);
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      this.hooks.onClose();
      this.onclose?.();
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private peek(message: JSONRPCMessage): void {
    if (!("method" in message)) return;
    const params = message.params as Record<string, unknown> | undefined;
    if (message.method === "subscriptions/listen" && "id" in message) {
      const notifications = params?.notifications as { resourceSubscriptions?: unknown } | undefined;
      const uris = notifications?.resourceSubscriptions;
      if (Array.isArray(uris)) {
        this.hooks.onListen(
          message.id,
          uris.filter((u): u is string => typeof u === "string"),
        );
      }
    } else if (message.method === "notifications/cancelled") {
      const id = params?.requestId;
      if (typeof id === "string" || typeof id === "number") this.hooks.onCancel(id);
    }
  }
}
