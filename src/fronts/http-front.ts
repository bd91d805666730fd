import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { CatalogMode } from "../catalog-modes/catalog-mode.js";
import { sandboxQueue } from "../code-mode/sandbox-queue.js";
import type { TokenConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import type { Gateway } from "../gateway/gateway.js";
import { GatewayMetrics } from "../gateway/metrics.js";
import type { Authenticator } from "./authenticator.js";
import type { ClusterLink } from "./cluster-link.js";
import type { ConnectPages } from "./connect-pages.js";
import { ConnectionLimits } from "./connection-limits.js";
import type { FrontPage, FrontPageFactory } from "./front-page.js";
import { HttpAdmission } from "./http-admission.js";
import { DEFAULT_PORT, type GuardPolicy, isLoopbackHost } from "./http-guard.js";
import { httpRoutes } from "./http-routes.js";
import { listenProblem } from "./listen-error.js";
import { mcpEndpoint } from "./mcp-endpoint.js";
import { ByteBudget, type MemoryBudget } from "./memory-budget.js";
import { ConcurrencyLimiter } from "./rate-limiter.js";
import { RequestDrain } from "./request-drain.js";
import { Rev2025HttpSessions } from "./rev2025-sessions.js";
import { ServerCards } from "./server-cards.js";
import { SSE_PATH, SseFront } from "./sse-front.js";
import { attachWebSocketFront } from "./ws-front.js";

export { DEFAULT_PORT } from "./http-guard.js";

/** Options of {@link startHttpFront}. */
export interface HttpFrontOptions {
  /** Default 127.0.0.1. Any other address requires tokens. */
  host?: string;
  /** Default {@link DEFAULT_PORT}; 0 picks a free port. */
  port?: number;
  /** Bearer tokens, each bound to a profile; none means no authentication (loopback only). */
  tokens?: TokenConfig[];
  /** The profile of clients that authenticate with no profile-bound token. */
  profile?: string;
  /**
   * How clients of this front see the tools (`all`, `search`, `code`) when their token sets no
   * `mode`; default: their profile's, else the gateway's.
   */
  mode?: CatalogMode;
  /** Largest accepted request body. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Requests per second per token (or per client address without tokens), with a burst. */
  rateLimit?: { perSecond: number; burst: number };
  /** Requests in flight per client (per connection on /ws). Default 256. */
  maxConcurrent?: number;
  /**
   * Time a request body has to arrive in full, from its headers, before it is answered 408
   * and its connection closed. A body is read before it takes a call slot. Default 30 s.
   */
  bodyTimeoutMs?: number;
  /**
   * What may wait in the gateway, all clients and fronts (/mcp, /sse, /ws) together: request
   * bodies being read and held, and their answers until written out. Bytes, or an accountant
   * shared with other fronts. Past it a large request is refused at once (503, `Retry-After`);
   * small ones (up to 64 KiB) have a reserve of their own. Default 32 MiB.
   */
  memoryBudget?: number | MemoryBudget;
  /**
   * Time a connection has to send a complete request head, from its opening (or from the start
   * of a request on a kept connection); past it, it is answered 408 and closed. Default 30 s.
   */
  idleTimeoutMs?: number;
  /**
   * Open connections, all clients together; past it (or past the per-address cap) a connection
   * is served only `/healthz` and `/readyz`. Default 10 000, or three quarters of the process's
   * file descriptors when fewer.
   */
  maxConnections?: number;
  /** Open connections from one client address. Default 2 000. */
  maxConnectionsPerClient?: number;
  /** Long-lived streams (2026 `subscriptions/listen`) open per client. Default 64. */
  maxStreams?: number;
  /** 2025 sessions open at once, all clients together. Default 10 000. */
  maxSessions?: number;
  /** 2025 sessions open at once per client; past it the longest idle one is closed. Default 1 000. */
  maxSessionsPerClient?: number;
  /**
   * Origins of pages that may call this front besides its own (`https://app.example.com`):
   * matched exactly, scheme, host and port (`serve.allowedOrigins`, `--allow-origin`).
   */
  allowedOrigins?: readonly string[];
  /** Host/Origin policy; default: loopback names only on a loopback bind, plus `allowedOrigins`. */
  guard?: GuardPolicy;
  /** Serve WebSocket at /ws too. Default true. */
  websocket?: boolean;
  /**
   * The web page to serve beside MCP (the dashboard: `dashboardPage` from the dashboard's
   * module, as `serve()` passes it); none when absent or `false`.
   */
  dashboard?: FrontPageFactory | false;
  /** The `/connect/<server>` pages where users connect their per-user servers (`connectPages`). */
  connect?: ConnectPages;
  /** Decides who is calling; default: the static `tokens`. */
  authenticator?: Authenticator;
  /**
   * Serve MCP at /mcp (and /ws). Default true; `false` leaves the dashboard and the health
   * endpoints, for a gateway that serves its client on stdio.
   */
  mcp?: boolean;
  /**
   * One replica of several (`cluster:`): session ids name their owner, and requests for another
   * replica's session or parked call are forwarded to it.
   */
  cluster?: ClusterLink;
  /**
   * Serve the Server Card at `/mcp/server-card` and the AI Catalog at
   * `/.well-known/ai-catalog.json` (the MCP draft SEP-2127; `serve.cards`). Default true.
   */
  cards?: boolean;
}

/** A running HTTP front. */
export interface HttpFront {
  /** The MCP endpoint, e.g. `http://127.0.0.1:8420/mcp`. */
  readonly url: string;
  /** The WebSocket endpoint, e.g. `ws://127.0.0.1:8420/ws`. */
  readonly wsUrl: string;
  /** The 2024-11-05 HTTP+SSE endpoint, e.g. `http://127.0.0.1:8420/sse`. */
  readonly sseUrl: string;
  /** The web dashboard, e.g. `http://127.0.0.1:8420/dashboard`; absent when turned off. */
  readonly dashboardUrl?: string;
  readonly server: Server;
  readonly metrics: GatewayMetrics;
  /**
   * Replaces the bearer tokens (a reloaded config): requests are checked against the new
   * ones from now on, 2025 sessions included. Refused, leaving the old ones in place, when
   * it would leave a non-loopback address without any.
   */
  setTokens(tokens: TokenConfig[]): void;
  /**
   * Stops accepting, lets requests in flight answer (up to `graceMs`, default 10 s), then
   * ends sessions and streams.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves the gateway over Streamable HTTP at `/mcp` (2026 stateless requests and 2025
 * sessions side by side), WebSocket at `/ws`, and `/healthz`, `/readyz`, `/metrics`.
 */
export async function startHttpFront(gateway: Gateway, options: HttpFrontOptions = {}): Promise<HttpFront> {
  const host = options.host ?? "127.0.0.1";
  const parts = frontParts(gateway, options, host);
  const { admission, metrics, sessions, sse, drain, dashboard, endpoints, cards } = parts;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const server = createServer({
    // Node closes a connection without a complete request head after headersTimeout, checked
    // every connectionsCheckingInterval: a connection that sends nothing holds a descriptor
    // no longer than that. requestTimeout may not be shorter; bodies have their own deadline.
    headersTimeout: idleTimeoutMs,
    requestTimeout: Math.max(300_000, idleTimeoutMs),
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(idleTimeoutMs / 4))),
  });
  const connections = new ConnectionLimits(server, {
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    ...(options.maxConnectionsPerClient === undefined
      ? {}
      : { maxConnectionsPerClient: options.maxConnectionsPerClient }),
  });
  // The routes themselves are the listener (they need the connection limits, which need the
  // server): no closure of this file's between Node and them on every request.
  server.on(
    "request",
    httpRoutes({ ...parts, gateway, connections, mcp: options.mcp !== false, connect: options.connect }),
  );
  server.keepAliveTimeout = 65_000;
  const ws =
    options.websocket === false || options.mcp === false
      ? undefined
      : attachWebSocketFront(gateway, server, {
          admit: async (req) => {
            const admitted = await parts.admitClient(req);
            return "status" in admitted ? admitted : admitted.caller;
          },
          maxBytes: parts.maxBody,
          maxInFlight: parts.concurrency.max,
          budget: parts.budget,
          connections,
        });
  const { port, address } = await listen(server, host, options.port ?? DEFAULT_PORT);
  admission.listening(port);
  options.authenticator?.bound?.(boundOrigins(address, port));
  cards?.bound(address, port);
  const hostPart = host.includes(":") ? `[${host}]` : host;
  const base = `http://${hostPart}:${port}`;
  endpoints.mcp = `${base}/mcp`;
  if (ws !== undefined) endpoints.ws = `ws://${hostPart}:${port}/ws`;
  return {
    url: `${base}/mcp`,
    wsUrl: `ws://${hostPart}:${port}/ws`,
    sseUrl: `${base}${SSE_PATH}`,
    ...(dashboard === undefined ? {} : { dashboardUrl: `${base}/dashboard` }),
    server,
    metrics,
    setTokens(next) {
      admission.setTokens(next);
    },
    async close(graceMs = 10_000) {
      // Stop taking requests; let the ones in flight answer (bounded), then cut the rest.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await drain.drain(graceMs);
      parts.unobserve();
      parts.untrackSandbox();
      sessions.close();
      sse.close();
      ws?.close();
      dashboard?.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** What the HTTP front is made of before it listens: admission, limits, metrics, sessions and endpoints. */
interface FrontParts {
  admission: HttpAdmission;
  admitClient: HttpAdmission["admitClient"];
  maxBody: number;
  /** Requests in flight per client. */
  concurrency: ConcurrencyLimiter;
  budget: MemoryBudget;
  metrics: GatewayMetrics;
  sessions: Rev2025HttpSessions;
  sse: SseFront;
  /** Requests being answered, for a graceful close. */
  drain: RequestDrain;
  dashboard: FrontPage | undefined;
  /** The Server Card and the AI Catalog, unless turned off (or MCP is not served here). */
  cards: ServerCards | undefined;
  /** The addresses the dashboard shows, known once the front listens. */
  endpoints: { mcp: string; ws?: string };
  handleMcp: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  cluster: ClusterLink | undefined;
  unobserve: () => void;
  untrackSandbox: () => void;
}

/** The HTTP front's parts from its options: who is admitted, the limits, metrics, sessions and pages. */
function frontParts(gateway: Gateway, options: HttpFrontOptions, host: string): FrontParts {
  const admission = new HttpAdmission({
    host,
    port: options.port ?? DEFAULT_PORT,
    tokens: options.tokens ?? [],
    ...(options.authenticator === undefined ? {} : { authenticator: options.authenticator }),
    ...(options.guard === undefined ? {} : { guard: options.guard }),
    ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    ...(options.mode === undefined ? {} : { mode: options.mode }),
    ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
    ...(options.cluster === undefined ? {} : { cluster: options.cluster }),
  });
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const concurrency = new ConcurrencyLimiter(options.maxConcurrent ?? 256);
  const streams = new ConcurrencyLimiter(options.maxStreams ?? 64);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
  const metrics = new GatewayMetrics({ methods: gateway.methods.names() });
  const budget =
    typeof options.memoryBudget === "object" ? options.memoryBudget : new ByteBudget(options.memoryBudget);
  metrics.trackHub(gateway.hub);
  metrics.trackCache(gateway.cache);
  const untrackSandbox = metrics.trackSandbox(sandboxQueue);
  // Bound, not wrapped: the samples go straight to the metrics.
  const unobserve = gateway.observe(metrics.observeRequest.bind(metrics));
  const cluster = options.cluster;
  const sessions = new Rev2025HttpSessions(gateway, {
    ...(options.maxSessions === undefined ? {} : { maxSessions: options.maxSessions }),
    ...(options.maxSessionsPerClient === undefined
      ? {}
      : { maxSessionsPerClient: options.maxSessionsPerClient }),
    onLimit: (outcome) => metrics.countSessionLimit("http", outcome),
    ...(cluster === undefined ? {} : { directory: cluster.sessions }),
  });
  // Requests being answered, for a graceful close. Long-lived streams (a 2025 session's GET,
  // a 2026 listen) are not waited for.
  const drain = new RequestDrain();
  // Bound, not wrapped: each request's admission goes straight to it.
  const admitClient = admission.admitClient.bind(admission);
  const limits = { concurrency, streams, maxBodyBytes: maxBody, bodyTimeoutMs, budget };
  const sse = new SseFront(gateway, {
    admit: admitClient,
    ...limits,
    draining: () => drain.draining,
    ...(cluster === undefined
      ? {}
      : {
          directory: cluster.sessions,
          forward: (replica, req, res, body) => cluster.forward(replica, req, res, "session", body),
        }),
  });
  const endpoints: { mcp: string; ws?: string } = { mcp: "" };
  const dashboard =
    options.dashboard === undefined || options.dashboard === false
      ? undefined
      : options.dashboard.create(gateway, {
          admit: (req, limited = false) => admission.admit(req, limited),
          checkPage: (req) => admission.checkPage(req),
          endpoints: () => endpoints,
          authenticated: () => admission.authenticated,
          mcp: options.mcp !== false,
          ...(cluster === undefined ? {} : { cluster: () => options.cluster?.health() }),
        });
  const handleMcp = mcpEndpoint({
    gateway,
    admit: admitClient,
    sessions,
    sse,
    drain,
    ...limits,
    ...(cluster === undefined ? {} : { cluster }),
  });
  const cards =
    options.cards === false || options.mcp === false
      ? undefined
      : new ServerCards({
          gateway,
          ...(options.authenticator === undefined ? {} : { authenticator: options.authenticator }),
          authenticated: () => admission.authenticated,
          profile: options.profile,
          sse: true,
          websocket: options.websocket !== false,
        });
  return {
    admission,
    admitClient,
    maxBody,
    cards,
    concurrency,
    budget,
    metrics,
    sessions,
    sse,
    drain,
    dashboard,
    endpoints,
    handleMcp,
    cluster,
    unobserve,
    untrackSandbox,
  };
}

/** Listens on `host:port`; an address in use (or another known problem) is an error that says what to do. */
async function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port));
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/**
 * The origins a server listening at `address:port` is reached at: the address itself, and
 * `localhost` when it is a loopback address (the name every local client uses for it).
 */
function boundOrigins(address: string, port: number): string[] {
  const literal = address.includes(":") ? `[${address}]` : address;
  const origins = [`http://${literal}:${port}`];
  if (isLoopbackHost(address)) origins.push(`http://localhost:${port}`);
  return origins;
}

/** Why the front could not listen, with what to do about it (instead of a stack trace). */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  const known = listenProblem(error.code, host, port);
  if (known === undefined) return error;
  return new McplexError(
    "INVALID_ARGUMENT",
    `cannot listen: ${known.problem}`,
    { hint: known.hint },
    { cause: error },
  );
}
