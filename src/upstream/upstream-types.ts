import type { ListKind } from "../protocol/list-changes.js";
import type { Implementation } from "../protocol/rev2026.js";
import type { Progress } from "../protocol/rpc-connection.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";
import type { BackoffOptions } from "./backoff.js";
import type { OAuthHost } from "./oauth.js";

/**
 * Life of one upstream: `idle` (lazy, not started yet) → `starting` → `ready`;
 * a crash goes to `reconnecting`; a failed start to `failed` (retried when the
 * cause may pass); `close()` ends in `stopped`.
 */
export type UpstreamState = "idle" | "starting" | "ready" | "failed" | "reconnecting" | "stopped";

/** Events an upstream reports. */
export type UpstreamEvent =
  | { type: "state"; state: UpstreamState; previous: UpstreamState; error?: string; retryAt?: number }
  | { type: "list-changed"; kinds: ListKind[] }
  | { type: "resource-updated"; uri: string }
  | { type: "notification"; method: string; params?: Record<string, unknown> }
  | { type: "slow-call"; method: string; name?: string; ms: number }
  /** The server declares a list but answers its method with "method not found": read as empty. */
  | { type: "list-not-implemented"; method: string };

export interface UpstreamOptions {
  clientInfo: Implementation;
  onEvent: (event: UpstreamEvent) => void;
  /** Handler of server-to-client requests; without one they are declined. */
  onServerRequest?: () => ServerRequestHandler | undefined;
  /** Capabilities declared to the server; default: all of them when there is a handler, else none. */
  clientCapabilities?: Record<string, unknown>;
  backoff?: BackoffOptions;
  /** Calls slower than this are counted and reported. Default 5000 ms. */
  slowMs?: number;
  /** Pin a protocol revision instead of negotiating. */
  protocolVersion?: string;
  /** Takes secrets out of error text (messages quote the server's stderr). */
  redact?: (text: string) => string;
  /** Token store and user prompt for servers configured with `oauth`. */
  oauth?: OAuthHost;
  /** A bearer token for each HTTP request of a remote server (a per-user connection's; see `ConnectOptions.bearer`). */
  bearer?: (signal?: AbortSignal) => Promise<string>;
}

/** Per-call options. */
export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  onProgress?: (progress: Progress) => void;
  /**
   * The capabilities of the client this call is made for (2026 servers read them per
   * request; 2025 servers only know the connection's).
   */
  clientCapabilities?: Record<string, unknown>;
  /** Log messages this call wants (2026 servers send `notifications/message` only when asked per request). */
  logLevel?: string;
  /** Resolve with a `RawJson` when the result came as one (see `RpcRequestOptions.rawResult`). */
  rawResult?: boolean;
}
