import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { McplexConfig, ServerConfig } from "../config/types.js";
import type { CredentialVault, UserCredentialSource, UserRef } from "../credentials/user-credentials.js";
import type { ToolChange, ToolPins } from "../pins/tool-pins.js";
import type { ListKind } from "../protocol/list-changes.js";
import type { Implementation } from "../protocol/rev2026.js";
import type { ServerRequestHandler } from "../protocol/server-requests.js";
import type { BackoffOptions } from "../upstream/backoff.js";
import type { OAuthHost } from "../upstream/oauth.js";
import type { UpstreamStatsSnapshot } from "../upstream/upstream-stats.js";
import type { UpstreamState } from "../upstream/upstream-types.js";
import type { CallOptions, Interceptor } from "./call-pipeline.js";

/** Options of a {@link Hub}. */
export interface HubOptions {
  config: McplexConfig;
  /** How mcplex introduces itself to servers. */
  clientInfo?: Implementation;
  /** Answers server-to-client requests (sampling, elicitation, roots) for every call without its own handler. */
  onServerRequest?: ServerRequestHandler;
  /** Calls slower than this (ms) are counted and reported as `slow-call` events. Default 5000. */
  slowMs?: number;
  /** Leave tools of unavailable servers out of listings instead of marking them unavailable. */
  hideUnavailable?: boolean;
  /** Reconnect timing (default 1 s doubling to 30 s, with jitter). */
  backoff?: BackoffOptions;
  /**
   * Capabilities declared to servers. Default: sampling, elicitation and roots when
   * `onServerRequest` is given, none otherwise. A gateway declares them all and answers
   * per call.
   */
  clientCapabilities?: Record<string, unknown>;
  /**
   * Where tokens of servers configured with `oauth` are kept (default: memory), and how to
   * ask the user for a new authorization (default: none, so such a server fails with a hint).
   */
  oauth?: OAuthHost;
  /**
   * Layers on the path of every call, whoever makes it (see {@link Interceptor}): the library's
   * `hub.callTool`, the CLI, the agent loop, and the requests of a gateway's clients on any
   * front (outermost there, around the gateway's own layers). The first is outermost. More
   * can be added with `hub.use`.
   */
  interceptors?: readonly Interceptor[];
  /**
   * Layers around each request the hub sends a server, input_required retries included: the
   * request's `params` are the server's own (original names), `target.server` names it, and
   * `callOptions` carry the request's timeout. Tracing and recording sit here.
   */
  upstreamInterceptors?: readonly Interceptor[];
  /**
   * The directory where servers' last-seen tool lists are kept between runs (`DIR/tools/NAME.json`,
   * see `ToolListStore`): `available:` servers show theirs while stopped, `--simulate` stands in
   * with them. Default: `defaultCacheDir()` when the config has `available:` servers, else memory
   * only; `false`: memory only.
   */
  toolCache?: string | false;
  /**
   * The approved tools of servers with `pin:` (see `ToolPins`, `lockFilePath`): their tools that
   * differ from those approved are held out of the catalog by their policy, reported by
   * `hub.pinChanges()` and `pin-changes` events, and let in by `hub.trustTools()`. Without it,
   * `pin:` does nothing (the CLI opens the lock file beside the config).
   */
  pins?: ToolPins;
  /**
   * Gives each signed-in user's connection plan for servers whose `credentials` are not
   * `shared` (per-user OAuth, token exchange, a stdio server's values). Without it, plans come
   * from {@link vault} alone: the user's `${user:NAME}` values.
   */
  userCredentials?: UserCredentialSource;
  /** Per-(user, server) credentials of per-user servers. Default: in memory. */
  vault?: CredentialVault;
  /**
   * The page where `user` connects `server` (`/connect/<server>`): a call of a user who has not
   * connected it is refused with a `ConnectRequiredError` carrying this URL.
   */
  connectUrl?: (user: UserRef, server: string) => string;
}

/** What `hub.servers()` reports for each configured server. */
export interface ServerStatus {
  name: string;
  enabled: boolean;
  lazy: boolean;
  state: UpstreamState | "disabled";
  transport: ServerConfig["transport"];
  /** Why `transport` is not the configured one, e.g. `websocket upgrade refused: 502 Bad Gateway`. */
  fallbackReason?: string;
  protocolVersion?: string;
  serverName?: string;
  /** What the server tells a model about using it. */
  instructions?: string;
  error?: string;
  /** What to do about `error`, when known (e.g. the command that authorizes the server). */
  hint?: string;
  /** Epoch ms of the next reconnect attempt. */
  retryAt?: number;
  /** While its breaker is open (too many failures in a row): epoch ms when it closes. */
  breakerOpenUntil?: number;
  /** The same for people: `open until HH:MM:SS` (local time). */
  breaker?: string;
  pid?: number;
  tools: number;
  /** Connections made: the first start, restarts after an idle stop, reconnects. */
  starts: number;
  /** Times it was stopped after `idleTimeout` without a call (state `idle` until the next call). */
  idleStops: number;
  /** With `share: false`: client sessions holding a connection of their own now. */
  clientConnections?: number;
  /** With `credentials` other than `shared`: users holding a connection of their own now (a stdio server's processes). */
  userConnections?: number;
  /** With `pin:`: tool changes waiting for approval (`mcplex trust`), and how many tools they hold out. */
  pinChanges?: number;
  held?: number;
  /** Served from a recording, or by a simulator built from its tool list, not by the server itself. */
  simulated?: "recording" | "tool-list";
  stats: UpstreamStatsSnapshot;
}

/** What `hub.serverDetails()` says of a connected server. */
export interface ServerDetails {
  protocolVersion?: string;
  serverInfo?: Implementation;
  capabilities?: Record<string, unknown>;
  instructions?: string;
  tools: readonly Tool[];
  resources: readonly Resource[];
  resourceTemplates: readonly ResourceTemplate[];
  prompts: readonly Prompt[];
}

/** Events the hub emits; a discriminated union on `type`. */
export type HubEvent =
  | {
      type: "server-state";
      server: string;
      state: UpstreamState;
      previous: UpstreamState;
      error?: string;
      retryAt?: number;
    }
  /**
   * Lists of `servers` changed; with `user` (a `UserRef.key`), only that user's own list of a
   * per-user server did, which no one else's list shows.
   */
  | { type: "catalog-changed"; servers: string[]; kinds: ListKind[]; user?: string }
  | { type: "resource-updated"; server: string; uri: string }
  | { type: "notification"; server: string; method: string; params?: Record<string, unknown> }
  | { type: "slow-call"; server: string; method: string; name?: string; ms: number }
  /**
   * The tools of pinned server `server` differ from those approved (again, or differently): the
   * changes now waiting for approval, held or not by its policy; empty once all are trusted.
   */
  | { type: "pin-changes"; server: string; changes: ToolChange[] }
  /** `server` declares a list but answers `method` with "method not found": it is read as empty. */
  | { type: "list-not-implemented"; server: string; method: string }
  /**
   * A signed-in user's connection to per-user server `server` is closed (a stdio server's
   * process has exited): `idle` after `users.idleTimeout`, `closed` by `closeUser` or the server's
   * removal. `user` is the user's key (a digest), never a token.
   */
  | { type: "user-connection-closed"; server: string; user: string; reason: "idle" | "closed" };

export type { CallOptions };
