import type { IncomingMessage, ServerResponse } from "node:http";
import type { Gateway } from "../gateway/gateway.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import { ErrorCode } from "../protocol/error-codes.js";
import { healthReport } from "../telemetry/health-report.js";
import type { ClusterLink } from "./cluster-link.js";
import type { ConnectPages } from "./connect-pages.js";
import type { ConnectionLimits } from "./connection-limits.js";
import type { FrontPage } from "./front-page.js";
import type { HttpAdmission } from "./http-admission.js";
import { sendJson, sendRpcError } from "./http-exchange.js";
import type { MemoryBudget } from "./memory-budget.js";
import type { Rev2025HttpSessions } from "./rev2025-sessions.js";
import type { ServerCards } from "./server-cards.js";
import { SseFront } from "./sse-front.js";

const WELL_KNOWN = "/.well-known/";

/** What the HTTP front's routes serve: its endpoints, pages and the state they report. */
export interface HttpRoutesParts {
  gateway: Gateway;
  admission: HttpAdmission;
  connections: ConnectionLimits;
  /** Serve MCP at /mcp (and /sse); `false` for a gateway that serves its client on stdio. */
  mcp: boolean;
  handleMcp: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  sse: SseFront;
  sessions: Rev2025HttpSessions;
  metrics: GatewayMetrics;
  budget: MemoryBudget;
  cluster: ClusterLink | undefined;
  dashboard: FrontPage | undefined;
  connect: ConnectPages | undefined;
  /** The Server Card and the AI Catalog (`serve.cards`); absent when turned off. */
  cards: ServerCards | undefined;
}

/**
 * The HTTP front's request handler: `/mcp`, `/healthz`, `/readyz`, `/metrics`, the
 * `/.well-known/` documents, the Server Card, `/sse`, the dashboard and the connect pages, each behind the
 * connection limits and the checks it needs.
 */
export function httpRoutes(parts: HttpRoutesParts): (req: IncomingMessage, res: ServerResponse) => void {
  const { admission, connections, sse, dashboard, connect } = parts;
  return (req, res) => {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query === -1 ? url : url.slice(0, query);
    if (!connections.admit(req, res, path)) return;
    switch (path) {
      case "/mcp":
        serveMcp(parts, req, res);
        return;
      case "/healthz": {
        // Liveness only, but still not for pages of other origins.
        const refused = admission.checkPage(req);
        if (refused !== undefined) return sendJson(res, refused.status, { error: refused.message });
        sendJson(res, 200, { status: "ok" });
        return;
      }
      case "/readyz":
      case "/metrics":
        serveOperatorEndpoint(parts, req, res, path).catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
          else res.destroy();
        });
        return;
      default:
        // Public by design (the draft's discovery documents): before the authenticator's.
        if (parts.cards?.owns(path) === true) return parts.cards.handle(req, res, path);
        if (path.startsWith(WELL_KNOWN)) return serveWellKnown(admission, req, res, path);
        if (parts.mcp && SseFront.owns(path)) {
          sse.handle(req, res, path).catch(() => res.destroy());
          return;
        }
        if (dashboard?.owns(path) === true) return dashboard.handle(req, res, path);
        if (connect?.owns(path) === true) {
          const refused = admission.checkPage(req);
          if (refused !== undefined) return sendJson(res, refused.status, { error: refused.message });
          connect.handle(req, res, path).catch(() => res.destroy());
          return;
        }
        sendJson(res, 404, { error: `no such endpoint ${path}; MCP is served at /mcp` });
    }
  };
}

/** `/mcp`, or why it is not served on this port; an error the endpoint did not answer is a 500. */
function serveMcp(parts: HttpRoutesParts, req: IncomingMessage, res: ServerResponse): void {
  if (!parts.mcp) {
    sendJson(res, 404, {
      error: "MCP is not served on this port: this gateway serves its client on stdio",
    });
    return;
  }
  parts.handleMcp(req, res).catch((error: unknown) => {
    if (!res.headersSent)
      sendRpcError(res, 500, null, ErrorCode.InternalError, `Internal error: ${(error as Error).message}`);
    else res.end();
  });
}

/** `/readyz` and `/metrics`: server names and errors, for operators (admitted, not rate-limited). */
async function serveOperatorEndpoint(
  parts: HttpRoutesParts,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const { metrics, cluster } = parts;
  // Server names and errors: the same Host/Origin and credential checks as /mcp (not its
  // rate limit), and an operator's rights.
  const refused = await parts.admission.admitOperator(req, path);
  if (refused !== undefined)
    return sendJson(res, refused.status, { error: refused.message }, refused.headers);
  if (path === "/readyz") {
    const report = healthReport(parts.gateway.hub);
    const replicas = cluster?.health();
    if (replicas !== undefined) {
      Object.assign(report, { cluster: replicas });
      if (report.status === "ok" && replicas.status !== "ok") report.status = "degraded";
    }
    sendJson(res, report.status === "down" ? 503 : 200, report);
    return;
  }
  metrics.setSessions("http", parts.sessions.size + parts.sse.size);
  metrics.setLimits({ budget: parts.budget, connections: parts.connections });
  const { contentType, body } = await metrics.render();
  res.writeHead(200, { "content-type": contentType }).end(body);
}

/**
 * `/.well-known/...` documents the authenticator publishes (OAuth protected-resource
 * metadata): public by design, so no credential and any origin; nothing else is there.
 */
function serveWellKnown(
  admission: HttpAdmission,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  const cors = { "access-control-allow-origin": "*" };
  if (req.method === "OPTIONS") {
    res
      .writeHead(204, {
        ...cors,
        "access-control-allow-methods": "GET",
        "access-control-allow-headers": "*",
      })
      .end();
    return;
  }
  const rest = path.slice(WELL_KNOWN.length);
  const slash = rest.indexOf("/");
  const name = slash === -1 ? rest : rest.slice(0, slash);
  const suffix = slash === -1 ? "" : rest.slice(slash);
  const document = admission.wellKnown(name, suffix, req);
  if (document === undefined) sendJson(res, 404, { error: `no such document ${path}` }, cors);
  else if (req.method !== "GET" && req.method !== "HEAD")
    sendJson(res, 405, { error: "use GET" }, { ...cors, allow: "GET" });
  else sendJson(res, 200, document, { ...cors, "cache-control": "max-age=300" });
}
