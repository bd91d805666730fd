/**
 * The "everything" server over Streamable HTTP on 127.0.0.1, at `/mcp`: 2026-07-28 requests go
 * to the SDK's `createMcpHandler` (a fresh instance per request, listen streams on its bus),
 * 2025 requests to stateful sessions. Host and Origin are checked first: only localhost names
 * pass (DNS-rebinding protection).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type McpHttpHandler,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import { toNodeListener } from "../../fixtures/servers/node-fetch-listener.js";
import { buildEverythingServer } from "./build-everything-server.js";
import { createLegacySessions } from "./legacy-sessions.js";

export interface EverythingHttpOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Serve 2025 only: every request goes to the session leg, 2026 requests included. */
  legacyOnly?: boolean;
  /** Errors the SDK reports out of band (rejected requests, listener failures). */
  onError?: (error: unknown) => void;
}

export interface EverythingHttp {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  close(): Promise<void>;
}

export const MCP_PATH = "/mcp";

export async function startEverythingHttp(options: EverythingHttpOptions = {}): Promise<EverythingHttp> {
  const onError = options.onError ?? (() => {});
  let modern: McpHttpHandler | undefined;
  // Each 2026 request has its own instance, so the trigger tools publish on the handler's bus.
  const notifier = {
    toolsChanged: () => modern?.notify.toolsChanged(),
    promptsChanged: () => modern?.notify.promptsChanged(),
  };
  modern = options.legacyOnly
    ? undefined
    : createMcpHandler(({ era }) => buildEverythingServer({ era, notifier }), {
        legacy: "reject",
        onerror: onError,
      });
  const legacy = createLegacySessions(() => buildEverythingServer({ era: "legacy" }));

  async function fetch(request: Request): Promise<Response> {
    const rejected =
      hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
      originValidationResponse(request, localhostAllowedOrigins());
    if (rejected !== undefined) return rejected;
    if (new URL(request.url).pathname !== MCP_PATH) return new Response("Not Found", { status: 404 });
    if (modern === undefined || (await isLegacyRequest(request))) return legacy.handle(request);
    return modern.fetch(request);
  }

  const http = createServer(toNodeListener(fetch, onError));
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, "127.0.0.1", () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}${MCP_PATH}`,
    close() {
      closing ??= (async () => {
        await Promise.allSettled([modern?.close(), legacy.close()]);
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
