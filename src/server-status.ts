import type { ServerConfig } from "./config/types.js";
import type { ServerStatus } from "./hub-types.js";
import type { Upstream } from "./upstream/upstream.js";

/** What `hub.servers()` says of one configured server. */
export function serverStatus(config: ServerConfig, upstream: Upstream, tools: number): ServerStatus {
  const status: ServerStatus = {
    name: config.name,
    enabled: config.enabled,
    lazy: config.lazy,
    state: config.enabled ? upstream.state : "disabled",
    transport: upstream.transport,
    tools,
    stats: upstream.stats.snapshot(),
  };
  if (upstream.protocolVersion !== undefined) status.protocolVersion = upstream.protocolVersion;
  if (upstream.serverInfo !== undefined) status.serverName = upstream.serverInfo.name;
  if (upstream.instructions !== undefined) status.instructions = upstream.instructions;
  if (upstream.error !== undefined && upstream.state !== "ready") {
    status.error = upstream.error.message;
    if (upstream.error.hint !== undefined) status.hint = upstream.error.hint;
  }
  if (upstream.retryAt !== undefined) status.retryAt = upstream.retryAt;
  if (upstream.pid !== undefined) status.pid = upstream.pid;
  return status;
}
