import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/types.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ListKind } from "../protocol/list-changes.js";
import type { Implementation } from "../protocol/rev2026.js";
import type { UpstreamStatsSnapshot } from "../upstream/upstream-stats.js";
import type { UpstreamState } from "../upstream/upstream-types.js";

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

/** Events about the hub's servers, as the hub emits them; a discriminated union on `type`. */
export type ServerEvent =
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
