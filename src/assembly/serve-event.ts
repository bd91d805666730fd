import type { AuditSinkEvent } from "../audit/audit-sink.js";
import type { ClusterEvent } from "../cluster/cluster.js";
import type { ToolChange } from "../pins/tool-pins.js";
import type { ReloadOutcome } from "../servers/config-reloader.js";

/** What `serve()` reports while it serves. */
export type ServeEvent =
  | { type: "reloaded"; outcome: ReloadOutcome; tokens?: string }
  /** One replica of several (`cluster:`): Redis lost or found again, replicas whose config differs. */
  | { type: "cluster"; event: ClusterEvent }
  | { type: "start-failed"; server: string; state: string; error: string; hint?: string }
  | { type: "record-failed"; server: string; error: string }
  /** A server declares a list it does not implement ("method not found"): served as empty. */
  | { type: "list-not-implemented"; server: string; method: string }
  /** A pinned server's tools differ from those approved (`pin:`): what waits for `mcplex trust`. */
  | { type: "pin-changes"; server: string; changes: ToolChange[] }
  /** The tool lock file changed but cannot be read: the approvals held before stay in force. */
  | { type: "pin-lock-unreadable"; error: string }
  /** A reloaded config's policies could not be put to work; the previous ones still are. */
  | { type: "policies-failed"; error: string }
  /** The audit trail (`audit:`) cannot write, writes again, refused calls, or lost lines at the end. */
  | AuditSinkEvent
  /** Sign-in (`auth:`): the identity provider could not be reached; what still works is said. */
  | { type: "auth"; message: string };
