import type { StreamableHTTPClientTransport, Transport } from "@modelcontextprotocol/client";
import type { RemoteServerConfig, ServerConfig } from "../config/types.js";
import { McplexError, TimeoutError } from "../errors.js";
import { type Implementation, rev2026Envelope } from "../protocol/rev2026.js";
import {
  type IncomingRequestHandler,
  type NotificationHandler,
  RpcConnection,
} from "../protocol/rpc-connection.js";
import { bearerFetch } from "./bearer-fetch.js";
import { httpStatus, type Negotiated, negotiate } from "./negotiate.js";
import type { OAuthHost } from "./oauth.js";
import { stdioParams } from "./spawn-server.js";
import { StderrTail } from "./stderr-tail.js";
import { StdioClientTransport } from "./stdio-transport.js";
import { upgradeFailure } from "./upgrade-failure.js";

/** A live, negotiated connection to one server. */
export interface Connected {
  connection: RpcConnection;
  negotiated: Negotiated;
  /**
   * The transport actually used: `sse` when Streamable HTTP was refused and the legacy fallback
   * worked, `streamable-http` when a WebSocket upgrade was refused and the HTTP fallback worked.
   */
  transport: ServerConfig["transport"];
  /** Why the configured transport is not the one in use, e.g. `websocket upgrade refused: 502 Bad Gateway`. */
  fallbackReason?: string;
  stderr: StderrTail;
  pid?: number;
}

export interface ConnectOptions {
  clientInfo: Implementation;
  capabilities: Record<string, unknown>;
  onRequest: IncomingRequestHandler;
  onNotification: NotificationHandler;
  onClose: (error?: Error) => void;
  signal: AbortSignal;
  /** Pin one protocol revision instead of negotiating. */
  protocolVersion?: string;
  /** Token store and user prompt for servers configured with `oauth`. */
  oauth?: OAuthHost;
  /**
   * A bearer token for every HTTP request of a remote server (asked before each one; a
   * WebSocket's at its upgrade): a per-user connection's exchanged token.
   */
  bearer?: (signal?: AbortSignal) => Promise<string>;
}

/**
 * Opens the transport a server config asks for, negotiates the protocol and hands
 * back a ready {@link RpcConnection}. Streamable HTTP falls back to the legacy
 * HTTP+SSE transport when the server refuses it with a 4xx, as the spec describes; a WebSocket
 * whose upgrade is refused or reset falls back to Streamable HTTP at the same host and path
 * (unless `fallback: none`). Every connect tries the configured transport first.
 */
export async function connect(config: ServerConfig, options: ConnectOptions): Promise<Connected> {
  if (config.transport === "websocket") return connectWebSocket(config, options);
  if (config.transport === "streamable-http") {
    try {
      return await open(config, "streamable-http", options);
    } catch (error) {
      const status = httpStatus(error);
      if (status === undefined || status < 400 || status >= 500 || status === 401 || status === 403)
        throw error;
      return open(config, "sse", options).catch((sseError: unknown) => {
        // Report the Streamable HTTP failure: it is the transport that was asked for.
        throw new McplexError(
          "UPSTREAM_START_FAILED",
          `${config.name}: ${config.url} refused Streamable HTTP (HTTP ${status}) and the legacy SSE fallback failed too: ${errorMessage(sseError)}`,
          { server: config.name, transport: "streamable-http" },
          { cause: sseError },
        );
      });
    }
  }
  return open(config, config.transport, options);
}

async function connectWebSocket(config: RemoteServerConfig, options: ConnectOptions): Promise<Connected> {
  try {
    return await open(config, "websocket", options);
  } catch (error) {
    const reason = upgradeFailure(error);
    if (reason === undefined || options.signal.aborted) throw error;
    const url = httpUrl(config.url);
    if (config.fallback === "none") {
      throw new McplexError(
        "UPSTREAM_START_FAILED",
        `${config.name}: ${reason} (fallback: none)`,
        {
          server: config.name,
          transport: "websocket",
          retryable: true,
          hint: `remove "fallback: none" from servers.${config.name} to fall back to Streamable HTTP at ${url}`,
        },
        { cause: error },
      );
    }
    const http: RemoteServerConfig = { ...config, transport: "streamable-http", url };
    try {
      return { ...(await open(http, "streamable-http", options)), fallbackReason: reason };
    } catch (httpError) {
      // Report the WebSocket failure first: it is the transport that was asked for.
      throw new McplexError(
        "UPSTREAM_START_FAILED",
        `${config.name}: ${reason}, and the Streamable HTTP fallback at ${url} failed too: ${errorMessage(httpError, config.name)}`,
        {
          server: config.name,
          transport: "websocket",
          retryable: true,
        },
        { cause: httpError },
      );
    }
  }
}

/** `ws://host/path` → `http://host/path`, `wss://` → `https://`. */
function httpUrl(url: string): string {
  const parsed = new URL(url);
  parsed.protocol = parsed.protocol === "wss:" ? "https:" : "http:";
  return parsed.href;
}

async function open(
  config: ServerConfig,
  kind: ServerConfig["transport"],
  options: ConnectOptions,
): Promise<Connected> {
  const { transport, stderr, close } = await createTransport(config, kind, options);
  let negotiated: Negotiated;
  const connection = new RpcConnection(transport, {
    server: config.name,
    timeout: config.timeout,
    onRequest: options.onRequest,
    onNotification: options.onNotification,
    onClose: (error) => {
      close();
      options.onClose(error);
    },
  });
  const onAbort = () => void connection.close().catch(() => {});
  options.signal.addEventListener("abort", onAbort, { once: true });
  try {
    await connection.start();
    negotiated = await negotiate(connection, {
      server: config.name,
      clientInfo: options.clientInfo,
      capabilities: options.capabilities,
      signal: options.signal,
      timeout: config.startTimeout,
      ...(options.protocolVersion === undefined ? {} : { protocolVersion: options.protocolVersion }),
    });
    if (!negotiated.stateless) transport.setProtocolVersion?.(negotiated.protocolVersion);
    else
      connection.negotiated({
        meta: rev2026Envelope(negotiated.protocolVersion, options.clientInfo, options.capabilities),
        // 2026 over HTTP has no notifications/cancelled: closing the request's stream cancels it.
        cancelByStream: transport.hasPerRequestStream === true,
      });
  } catch (error) {
    await connection.close().catch(() => {});
    throw startError(config, kind, error, stderr, options.signal);
  } finally {
    options.signal.removeEventListener("abort", onAbort);
  }
  const connected: Connected = { connection, negotiated, transport: kind, stderr };
  if (transport instanceof StdioClientTransport && transport.pid !== undefined) connected.pid = transport.pid;
  return connected;
}

/** Where OAuth tokens live when the hub was given no {@link OAuthHost}: this process's memory. */
let processOAuth: OAuthHost | undefined;

// The transports other than stdio, and OAuth, are loaded when a server needs them: a gateway of
// stdio servers, started by its client for every session, never loads the SDK's HTTP client, its
// schemas or `ws` (see bench/startup-bench.ts).

async function createTransport(
  config: ServerConfig,
  kind: ServerConfig["transport"],
  { oauth, bearer, signal }: ConnectOptions,
): Promise<{ transport: Transport; stderr: StderrTail; close: () => void }> {
  switch (config.transport) {
    case "stdio": {
      // Our RpcConnection reads a result kept as text, and parses it for a caller that did not ask.
      const transport = new StdioClientTransport(stdioParams(config), { rawResults: true });
      return { transport, stderr: transport.stderr, close: () => {} };
    }
    case "workspace": {
      // The built-in server runs in this process, linked by an in-memory pair.
      const [{ createWorkspaceServer }, { InMemoryTransport }] = await Promise.all([
        import("../workspace/workspace-server.js"),
        import("@modelcontextprotocol/client"),
      ]);
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const server = createWorkspaceServer({
        root: config.root,
        allowWrite: config.allowWrite,
        rules: config.rules,
        name: config.name,
      });
      await server.connect(serverSide);
      return {
        transport: clientSide,
        stderr: new StderrTail(),
        close: () => void server.close().catch(() => {}),
      };
    }
    case "local":
      return { transport: config.server.connect(), stderr: new StderrTail(), close: () => {} };
    case "replay": {
      const { replayTransport } = await import("./replay-source.js");
      return { transport: replayTransport(config), stderr: new StderrTail(), close: () => {} };
    }
    case "websocket": {
      const { WebSocketClientTransport } = await import("./websocket-transport.js");
      const headers =
        bearer === undefined
          ? config.headers
          : { ...config.headers, Authorization: `Bearer ${await bearer(signal)}` };
      return {
        transport: new WebSocketClientTransport({
          url: config.url,
          headers,
          server: config.name,
        }),
        stderr: new StderrTail(),
        close: () => {},
      };
    }
    default: {
      const { SSEClientTransport, StreamableHTTPClientTransport } = await import(
        "@modelcontextprotocol/client"
      );
      const url = new URL(config.url);
      const requestInit = { headers: config.headers };
      let send: (input: string | URL, init?: RequestInit) => Promise<Response> = fetch;
      if (config.oauth !== undefined) {
        const { memoryOAuthStore, oauthFetch, ServerOAuthProvider } = await import("./oauth.js");
        processOAuth ??= { store: memoryOAuthStore() };
        send = oauthFetch(new ServerOAuthProvider(config.name, config.oauth, oauth ?? processOAuth), url);
      }
      if (bearer !== undefined) send = bearerFetch(bearer);
      const transport =
        kind === "sse"
          ? new SSEClientTransport(url, {
              requestInit,
              fetch: send,
              eventSourceInit: { fetch: (input, init) => send(input, withHeaders(init, config.headers)) },
            })
          : new StreamableHTTPClientTransport(url, { requestInit, fetch: send });
      if (transport instanceof StreamableHTTPClientTransport) endSessionOnClose(transport);
      return { transport, stderr: new StderrTail(), close: () => {} };
    }
  }
}

function withHeaders(init: RequestInit | undefined, headers: Record<string, string>): RequestInit {
  const merged = new Headers(init?.headers);
  for (const [key, value] of Object.entries(headers)) merged.set(key, value);
  return { ...init, headers: merged };
}

function startError(
  config: ServerConfig,
  kind: ServerConfig["transport"],
  error: unknown,
  stderr: StderrTail,
  signal: AbortSignal,
): McplexError {
  const tail = stderr.text();
  const withTail = (message: string) => (tail === "" ? message : `${message}\n--- stderr ---\n${tail}`);
  // The start budget runs out through one of two timers of the same length: the start's signal, or
  // the handshake request's own timeout. Which fires first is up to the event loop; both say the same.
  const startTimedOut =
    (signal.aborted && signal.reason instanceof DOMException && signal.reason.name === "TimeoutError") ||
    error instanceof TimeoutError;
  if (startTimedOut) {
    return new McplexError(
      "UPSTREAM_START_FAILED",
      withTail(`${config.name}: did not finish starting within ${config.startTimeout} ms`),
      {
        server: config.name,
        transport: kind,
        retryable: true,
        hint: "raise startTimeout if the server is slow to start",
      },
      { cause: error },
    );
  }
  if (error instanceof McplexError && error.code === "UPSTREAM_START_FAILED") {
    return new McplexError(
      "UPSTREAM_START_FAILED",
      withTail(error.message),
      {
        server: config.name,
        transport: kind,
        retryable: error.retryable,
        ...(error.hint === undefined ? {} : { hint: error.hint }),
      },
      { cause: error.cause ?? error },
    );
  }
  const unauthorized = mcplexCause(error, "UPSTREAM_UNAUTHORIZED");
  if (unauthorized !== undefined) {
    // Retried like any start failure: a login in another terminal is seen on the next try.
    return new McplexError(
      "UPSTREAM_UNAUTHORIZED",
      unauthorized.message,
      {
        server: config.name,
        transport: kind,
        retryable: true,
        ...(unauthorized.hint ? { hint: unauthorized.hint } : {}),
      },
      { cause: error },
    );
  }
  const status = httpStatus(error);
  const retryable = status === undefined || status >= 500 || status === 429;
  const base =
    status !== undefined
      ? `${config.name}: ${"url" in config ? config.url : ""} answered HTTP ${status}`
      : `${config.name}: failed to start: ${errorMessage(error, config.name)}`;
  const hint = mcplexCause(error)?.hint;
  return new McplexError(
    "UPSTREAM_START_FAILED",
    withTail(base),
    { server: config.name, transport: kind, retryable, ...(hint === undefined ? {} : { hint }) },
    { cause: error },
  );
}

/** The first {@link McplexError} among `error` and its causes (with `code`, when given). */
function mcplexCause(error: unknown, code?: McplexError["code"]): McplexError | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 6; at = at.cause, depth++) {
    if (at instanceof McplexError && (code === undefined || at.code === code)) return at;
  }
  return undefined;
}

function errorMessage(error: unknown, server?: string): string {
  if (!(error instanceof Error)) return String(error);
  let message = error.message;
  if (server !== undefined && message.startsWith(`${server}: `)) message = message.slice(server.length + 2);
  // Network failures hide their reason ("connect ECONNREFUSED ...") a few causes deep.
  let deepest: unknown = error;
  for (let depth = 0; depth < 6; depth++) {
    const cause = (deepest as { cause?: unknown }).cause;
    if (!(cause instanceof Error)) break;
    deepest = cause;
  }
  const reason = (deepest as Error).message;
  if (deepest !== error && reason !== "" && !message.includes(reason)) message = `${message}: ${reason}`;
  return message;
}

/**
 * A 2025 session lives on the server until the client ends it, so closing sends the
 * session's DELETE first (bounded in time: a hung server must not hold up close()).
 * 2026 connections have no session id and close as they are.
 */
function endSessionOnClose(transport: StreamableHTTPClientTransport, graceMs = 2000): void {
  const closeTransport = transport.close.bind(transport);
  transport.close = async () => {
    if (transport.sessionId !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([transport.terminateSession().catch(() => {}), expired]);
      clearTimeout(timer);
    }
    await closeTransport();
  };
}
