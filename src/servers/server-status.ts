// How the hub describes one configured server: to callers (status, details) and to the catalog (snapshot).
import type { ServerSnapshot } from "../catalog/types.js";
import type { ServerConfig } from "../config/types.js";
import type { Upstream } from "../upstream/upstream.js";
import type { ServerDetails, ServerStatus } from "./server-types.js";

/** What `hub.servers()` says of one configured server. */
export function serverStatus(config: ServerConfig, upstream: Upstream, tools: number): ServerStatus {
  const status: ServerStatus = {
    name: config.name,
    enabled: config.enabled,
    lazy: config.lazy,
    state: config.enabled ? upstream.state : "disabled",
    transport: upstream.transport,
    tools,
    starts: upstream.starts,
    idleStops: upstream.idleStops,
    stats: upstream.stats.snapshot(),
  };
  if (upstream.fallbackReason !== undefined) status.fallbackReason = upstream.fallbackReason;
  if (upstream.protocolVersion !== undefined) status.protocolVersion = upstream.protocolVersion;
  if (upstream.serverInfo !== undefined) status.serverName = upstream.serverInfo.name;
  if (upstream.instructions !== undefined) status.instructions = upstream.instructions;
  if (upstream.error !== undefined && upstream.state !== "ready") {
    status.error = upstream.error.message;
    if (upstream.error.hint !== undefined) status.hint = upstream.error.hint;
  }
  if (upstream.retryAt !== undefined) status.retryAt = upstream.retryAt;
  if (upstream.breakerOpenUntil !== undefined) {
    status.breakerOpenUntil = upstream.breakerOpenUntil;
    status.breaker = breakerText(upstream.breakerOpenUntil);
  }
  if (upstream.pid !== undefined) status.pid = upstream.pid;
  if (config.transport === "replay")
    status.simulated = config.simulator === undefined ? "recording" : "tool-list";
  return status;
}

/**
 * How a server introduced itself on its connection and its lists as last fetched, with its
 * original names; `undefined` while it is not connected (see `Hub.serverDetails`).
 */
export function serverDetails(upstream: Upstream | undefined): ServerDetails | undefined {
  if (upstream === undefined || upstream.state !== "ready") return undefined;
  const details: ServerDetails = {
    tools: upstream.tools,
    resources: upstream.resources,
    resourceTemplates: upstream.resourceTemplates,
    prompts: upstream.prompts,
  };
  if (upstream.protocolVersion !== undefined) details.protocolVersion = upstream.protocolVersion;
  if (upstream.serverInfo !== undefined) details.serverInfo = upstream.serverInfo;
  if (upstream.capabilities !== undefined) details.capabilities = upstream.capabilities;
  if (upstream.instructions !== undefined) details.instructions = upstream.instructions;
  return details;
}

/** What the catalog sees of one configured server on its upstream. */
export function serverSnapshot(config: ServerConfig, upstream: Upstream): ServerSnapshot {
  const snapshot: ServerSnapshot = {
    server: config.name,
    filter: config.tools,
    // A server stopped for idleness stays on offer: the next call starts it again.
    state: config.enabled && upstream.available ? "ready" : "unavailable",
    tools: upstream.tools,
    resources: upstream.resources,
    resourceTemplates: upstream.resourceTemplates,
    prompts: upstream.prompts,
    listedAt: upstream.listedAt,
  };
  if (config.prefix !== undefined) snapshot.prefix = config.prefix;
  if (config.overrides !== undefined) snapshot.overrides = config.overrides;
  if (upstream.ttlMs !== undefined) snapshot.ttlMs = upstream.ttlMs;
  const extensions = upstream.capabilities?.extensions;
  if (typeof extensions === "object" && extensions !== null)
    snapshot.extensions = extensions as Record<string, unknown>;
  return snapshot;
}

/** `open until HH:MM:SS`, in local time, as `list`, `/readyz` and the dashboard show an open breaker. */
export function breakerText(until: number): string {
  const at = new Date(until);
  const two = (n: number) => String(n).padStart(2, "0");
  return `open until ${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}
