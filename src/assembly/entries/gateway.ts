/**
 * The gateway: a hub's catalog served as one MCP server. Named exports only.
 *
 * @example
 * const hub = new Hub({ config, clientCapabilities: ANSWERING_CAPABILITIES });
 * const gateway = new Gateway(hub, { ready: hub.start(), interceptors: [audit] });
 * const front = await startHttpFront(gateway, { port: 8420 });
 *
 * `ClientSession` and `Channel` are for fronts of your own (a transport mcplex does not
 * serve): a front opens a session per connection with `gateway.openSession(channel)` and hands
 * it each parsed message.
 */

export type { AuditBacklog, AuditSink, AuditSinkEvent } from "../../audit/audit-sink.js";
export { RotatingFile, type RotatingFileOptions } from "../../audit/rotating-file.js";
export { StreamSink } from "../../audit/stream-sink.js";
export type { CatalogMode, ModeSettings } from "../../catalog-modes/catalog-mode.js";
export { CatalogView, type ViewEngines } from "../../catalog-modes/catalog-view.js";
export { viewEngines } from "../../catalog-modes/view-engines.js";
export { type ModeTable, viewResolver } from "../../catalog-modes/view-resolver.js";
export { viewToolHost } from "../../catalog-modes/view-tool-host.js";
export { dashboardPage, dashboardPageWith } from "../../dashboard/dashboard.js";
export {
  type Authenticator,
  type AuthOutcome,
  type AuthRefusal,
  type AuthRequest,
  type Identity,
  StaticTokenAuthenticator,
} from "../../fronts/authenticator.js";
export type { FrontPage, FrontPageFactory, FrontPageHost } from "../../fronts/front-page.js";
export type { AdmissionRefusal as Refusal } from "../../fronts/http-admission.js";
export {
  DEFAULT_PORT,
  type HttpFront,
  type HttpFrontOptions,
  startHttpFront,
} from "../../fronts/http-front.js";
export { type StdioFrontOptions, serveGatewayStdio } from "../../fronts/stdio-front.js";
export { type Channel, ClientSession } from "../../gateway/client-session.js";
export { Gateway, type GatewayOptions } from "../../gateway/gateway.js";
export type { SubscriptionFilter } from "../../gateway/listen-streams.js";
export type { GatewayIdentity } from "../../gateway/methods/method-handler.js";
export { GatewayMetrics } from "../../gateway/metrics.js";
export {
  type CallRequest,
  compose,
  type Handler,
  type Interceptor,
  type JsonObject,
  type RequestContext,
  type RequestTarget,
  type ResultNeeds,
} from "../../hub/call-pipeline.js";
export type { RequestCaller } from "../../hub/request-caller.js";
export { type AuditLogOptions, type AuditRecord, auditLog } from "../../interceptors/audit-log.js";
export type { RequestSample } from "../../interceptors/observing.js";
export { type CacheCounts, ResultCache, type ResultCacheOptions } from "../../interceptors/result-cache.js";
export { serverTools } from "../../interceptors/server-tools.js";
export type { CallEnd, CallWatcher, WatchedCall } from "../../interceptors/watching.js";
export type { MethodRow, MethodRowInput, RevisionFamily, TargetKind } from "../../protocol/method-table.js";
export { ANSWERING_CAPABILITIES } from "../../protocol/server-requests.js";
export { healthReport } from "../../telemetry/health-report.js";
export {
  type RunningGateway,
  type ServeEvent,
  type ServeOptions,
  serve,
} from "../serve.js";
