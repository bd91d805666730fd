import type { Hub, ServerStatus } from "../hub/hub.js";

/** One server in a {@link HealthReport}. */
export interface ServerHealth {
  name: string;
  state: ServerStatus["state"];
  /** Why it is not ready (already redacted by the hub). */
  error?: string;
  /** Epoch ms of its next reconnect attempt. */
  retryAt?: number;
  /** While its breaker is open: `open until HH:MM:SS`, and the same as epoch ms. */
  breaker?: string;
  breakerOpenUntil?: number;
  /** Served from a recording or a simulator (`mcplex serve --simulate`), not by the server. */
  simulated?: "recording" | "tool-list";
}

/** What `/healthz` and `/readyz` report. */
export interface HealthReport {
  status: "ok" | "degraded" | "down";
  servers: ServerHealth[];
}

/**
 * The gateway's health from its hub's servers. Only enabled servers count; a lazy server
 * not started yet (`idle`, or `stopped` after an idle stop) counts as healthy, since it
 * starts on first use. `down`: no enabled server is healthy (answer `/readyz` with 503);
 * `degraded`: some are not; `ok` otherwise, including when no server is enabled (an empty
 * catalog is served fine). It carries no env values or headers; a server's error says why it
 * failed (it may name the command that was not found) with secrets redacted by the hub,
 * and `/readyz` is behind the same Host/Origin and token checks as `/mcp`.
 */
export function healthReport(hub: Pick<Hub, "servers">): HealthReport {
  const servers: ServerHealth[] = [];
  let enabled = 0;
  let healthy = 0;
  for (const status of hub.servers()) {
    const entry: ServerHealth = { name: status.name, state: status.state };
    if (status.error !== undefined) entry.error = status.error;
    if (status.retryAt !== undefined) entry.retryAt = status.retryAt;
    if (status.breaker !== undefined) entry.breaker = status.breaker;
    if (status.breakerOpenUntil !== undefined) entry.breakerOpenUntil = status.breakerOpenUntil;
    if (status.simulated !== undefined) entry.simulated = status.simulated;
    servers.push(entry);
    if (!status.enabled) continue;
    enabled++;
    // `idle` also after an idle stop (`idleTimeout`): the next call starts it again.
    const waiting = status.state === "idle" || (status.lazy && status.state === "stopped");
    if (status.state === "ready" || waiting) healthy++;
  }
  const status = healthy === enabled ? "ok" : healthy === 0 ? "down" : "degraded";
  return { status, servers };
}
