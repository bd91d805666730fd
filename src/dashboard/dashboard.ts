import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthConfig } from "../config/types.js";
import { APP_FRAME_HTML, appFramePolicy, cspFromQuery } from "../ext/apps/app-frame.js";
import type { Identity } from "../fronts/authenticator.js";
import type { FrontPage, FrontPageFactory, FrontPageHost } from "../fronts/front-page.js";
import { sendJson } from "../fronts/http-exchange.js";
import { checkContentType } from "../fronts/http-guard.js";
import type { Gateway } from "../gateway/gateway.js";
import type { CacheCounts } from "../interceptors/result-cache.js";
import type { WatchedCall } from "../interceptors/watching.js";
import { healthReport } from "../telemetry/health-report.js";
import { CallFeed, type FeedEvent } from "./call-feed.js";
import { ConnectionsApi, type DashboardCredentials } from "./connections-api.js";
import { DashboardSignIn } from "./dashboard-sign-in.js";
import { LatencyHistory, type LatencyHistoryOptions } from "./latency-history.js";
import { type RulesSource, rulesInForce } from "./rules-in-force.js";
import { availableServers, parseActionPath, runServerAction } from "./server-actions.js";

const JS = "text/javascript; charset=utf-8";
/** The page's modules (plain ES modules, no build step). */
const MODULES = [
  "app.js",
  "auth.js",
  "dom.js",
  "mcp-client.js",
  "schema-form.js",
  "content-view.js",
  "sparkline.js",
  "playground.js",
  "resource-browser.js",
  "prompt-runner.js",
  "server-controls.js",
  "cluster-panel.js",
  "rules-panel.js",
  "sign-in.js",
  "app-view.js",
  "connections-panel.js",
];
/** The page's files, under web/dashboard/ beside src/ and dist/. */
const ASSETS: Record<string, { file: string; type: string }> = {
  "/dashboard": { file: "index.html", type: "text/html; charset=utf-8" },
  "/dashboard/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/dashboard/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
  ...Object.fromEntries(MODULES.map((file) => [`/dashboard/${file}`, { file, type: JS }])),
};
const ASSET_DIR = new URL("../../web/dashboard/", import.meta.url);

/**
 * Nothing but the page's own files, no framing by other sites, no referrer (the address of a
 * page back from sign-in holds a code until the page removes it). `connect` adds the origins the
 * scripts may fetch besides the page's own: the identity provider's, with sign-in. The one frame
 * the page holds is its own `/dashboard/app-frame`, where the playground runs an MCP App sandboxed.
 */
function pageHeaders(connect: readonly string[] = []): Record<string, string> {
  return {
    "content-security-policy": `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${["'self'", ...connect].join(" ")}; img-src 'self' data:; media-src data:; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
  };
}
const PAGE_HEADERS = pageHeaders();

/**
 * A server action by a signed-in user without operator rights. A static token bound to a profile
 * acts on that profile's servers, as the operator who handed it out chose; an identity provider
 * admits many people, so acting on servers takes a rule that says so (`auth.access`).
 */
const NOT_OPERATOR =
  "Forbidden: acting on servers is for operators, and no rule of this gateway's auth.access gives you operator rights; ask its operator (a rule with operator: true), or sign in as an operator";

/**
 * A server action must be a request no page of another site can send without a CORS preflight
 * (which this front never grants): a form post or a `text/plain` fetch carries no JSON type.
 */
const ACTION_TYPE = `Unsupported Media Type: a server action needs "Content-Type: application/json" (the body may be empty or {}), which a page of another site cannot send without a CORS preflight`;

/** How often queued events go out on a stream, ms: a busy gateway sends batches, not a flood. */
const FLUSH_MS = 100;
/** Most events in one batch; older ones beyond it are counted as dropped. */
const BATCH_MAX = 500;
/** A comment line this often keeps proxies from closing an idle stream, ms. */
const HEARTBEAT_MS = 20_000;

/**
 * The web dashboard of a running gateway: `/dashboard` (the page), `/dashboard/state`
 * (servers, health, tools, calls as JSON) and `/dashboard/events` (a server-sent event
 * stream of calls starting and ending, and of changes to servers and the catalog).
 * Data requests pass the same Host/Origin and token checks as `/mcp`; a profile-bound
 * token sees its profile's servers, tools and calls only. `POST /dashboard/servers/<name>/<action>`
 * restarts, starts, stops (an `available:` one), enables or disables a server, under the same checks (the token in the
 * `Authorization` header; cookies are never read), only with `Content-Type: application/json`
 * (which another site's page cannot send without a preflight), and only for servers the
 * token's profile has.
 * The page calls tools, reads resources and gets prompts as an MCP client of `/mcp` itself.
 * With sign-in (`auth:`), the page signs its user in at the identity provider from the browser
 * (`/dashboard/sign-in` says where and with which client) and sends the access token like any
 * client; a signed-in user acts on servers only with operator rights.
 */
export class Dashboard implements FrontPage {
  readonly #gateway: Gateway;
  readonly #host: FrontPageHost;
  readonly #feed: CallFeed;
  readonly #latency: LatencyHistory;
  readonly #mcp: boolean;
  readonly #startedAt = Date.now();
  readonly #streams = new Set<ServerResponse>();
  readonly #assets = new Map<string, Promise<Buffer>>();
  readonly #signIn: DashboardSignIn | undefined;
  readonly #connections: ConnectionsApi;
  readonly #rules: (() => RulesSource) | undefined;

  /**
   * `options.mcp: false` says MCP is not served at the page's origin (a gateway on stdio):
   * the page then has no tools, resources and prompts views, which call `/mcp`. `options.signIn`:
   * the gateway's `auth:` block, when it has one (the page then signs its user in).
   * `options.credentials`: the per-user credential vault and how to end a connection, for "Your
   * connections" and the operator's "Users" (`/api/connections`, `/api/users`; without it they
   * answer 501).
   */
  constructor(
    gateway: Gateway,
    host: FrontPageHost,
    options: {
      latency?: LatencyHistoryOptions;
      mcp?: boolean;
      signIn?: AuthConfig;
      credentials?: DashboardCredentials;
      /** The config now (after reloads): its policies, guardrails, quotas and overrides are listed. */
      rules?: () => RulesSource;
    } = {},
  ) {
    this.#gateway = gateway;
    this.#rules = options.rules;
    this.#connections = new ConnectionsApi(host, options.credentials);
    this.#signIn = options.signIn === undefined ? undefined : new DashboardSignIn(options.signIn);
    this.#mcp = options.mcp ?? true;
    this.#host = host;
    this.#feed = new CallFeed(gateway);
    this.#latency = new LatencyHistory(options.latency);
    this.#feed.subscribe((event) => {
      if (event.type === "call-ended" && event.call.server !== undefined)
        this.#latency.record(event.call.server, event.call.ms, event.call.startedAt + event.call.ms);
    });
  }

  /** Whether `path` is the dashboard's. */
  owns(path: string): boolean {
    return (
      path === "/" || path === "/dashboard" || path.startsWith("/dashboard/") || ConnectionsApi.owns(path)
    );
  }

  /** Answers a request for one of the dashboard's paths. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (ConnectionsApi.owns(path)) {
      await this.#connections.handle(req, res, path);
      return;
    }
    const action = parseActionPath(path);
    if (action !== undefined) {
      await this.#act(req, res, action);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/") {
      res.writeHead(302, { location: "/dashboard" }).end();
      return;
    }
    const asset = ASSETS[path];
    if (asset !== undefined) {
      await this.#serveAsset(req, res, asset);
      return;
    }
    if (path === "/dashboard/sign-in") {
      this.#serveSignIn(req, res);
      return;
    }
    if (path === "/dashboard/app-frame") {
      this.#serveAppFrame(req, res);
      return;
    }
    if (path !== "/dashboard/state" && path !== "/dashboard/events") {
      sendJson(res, 404, { error: `no such endpoint ${path}; the dashboard is at /dashboard` });
      return;
    }
    const caller = await this.#host.admit(req);
    if ("status" in caller) {
      sendJson(res, caller.status, { error: caller.message }, caller.headers);
      return;
    }
    if (path === "/dashboard/state")
      this.state(caller.profile, caller).then(
        (state) => sendJson(res, 200, state, { "cache-control": "no-store" }),
        (error: Error) => sendJson(res, 500, { error: `dashboard state failed: ${error.message}` }),
      );
    else this.#stream(req, res, caller.profile, caller.operator);
  }

  /**
   * Everything the page shows, in `profile`'s view: with `available`, the servers under the
   * config's `available:` that the profile may connect (whether each runs, its known tools).
   * `viewer` is who asks (default: the operator without a profile): a signed-in user is named
   * (`gateway.user`), and only an operator without a profile sees the cluster's replicas. Who
   * made each call is shown to operators only (see {@link shownCall}).
   */
  async state(
    profile?: string,
    viewer: { operator: boolean; identity?: Identity } = { operator: profile === undefined },
  ): Promise<Record<string, unknown>> {
    const operator = viewer.operator;
    const hub = this.#gateway.hub;
    const visible = (call: WatchedCall) => profile === undefined || call.profile === profile;
    const shown = <T extends WatchedCall>(calls: T[]) =>
      calls.filter(visible).map((call) => shownCall(call, operator));
    const available = await availableServers(hub, profile);
    const servers = hub.servers(profile);
    return {
      gateway: {
        ...this.#gateway.identity,
        startedAt: this.#startedAt,
        now: Date.now(),
        ...this.#host.endpoints(),
        authenticated: this.#host.authenticated(),
        mcpHere: this.#mcp,
        ...(profile === undefined ? {} : { profile }),
        ...userOf(viewer),
      },
      // Which connection panels the page shows this viewer (their data is read from /api/...).
      panels: this.#connections.panels(viewer),
      // Only the servers the profile can use: others' names, pids and errors are not its business.
      health: healthReport({ servers: () => servers }),
      servers,
      available,
      tools: hub.tools(profile).map((t) => ({
        name: t.name,
        server: t.server,
        // The playground maps an MCP App's calls (its server's own names) to exposed ones.
        originalName: t.originalName,
        ...(t.title === undefined ? {} : { title: t.title }),
        ...(t.description === undefined ? {} : { description: t.description }),
        available: t.available,
      })),
      // Pinned servers' tools that differ from those approved, with the diffs to review before `trust`.
      pinChanges: hub.pinChanges().filter((c) => servers.some((s) => s.name === c.server)),
      resources: hub.resources(profile).length,
      resourceTemplates: hub.resourceTemplates(profile).length,
      prompts: hub.prompts(profile).length,
      calls: { active: shown(this.#feed.active()), recent: shown(this.#feed.recent()) },
      latency: this.#latency.snapshot(
        Date.now(),
        servers.map((s) => s.name),
      ),
      cache: cacheOf(this.#gateway.cache.counts(), servers),
      // What decides and shapes calls: the operator's business (a condition may name groups).
      ...(profile === undefined && operator && this.#rules !== undefined
        ? { rules: rulesInForce(this.#rules()) }
        : {}),
      // Replicas' addresses are the operator's business, not a profile's.
      ...(profile === undefined && viewer.operator && this.#host.cluster !== undefined
        ? { cluster: this.#host.cluster() }
        : {}),
    };
  }

  /** Ends every event stream and stops watching the gateway. */
  close(): void {
    this.#feed.close();
    for (const res of this.#streams) res.end();
    this.#streams.clear();
  }

  /** A server action: POST only, admitted like /mcp (rate limit included), within the caller's profile. */
  async #act(
    req: IncomingMessage,
    res: ServerResponse,
    action: { server: string; action: string },
  ): Promise<void> {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const caller = await this.#host.admit(req, true);
    if ("status" in caller) {
      sendJson(res, caller.status, { error: caller.message }, caller.headers);
      return;
    }
    // Actions take no body: one sent anyway is read and ignored.
    req.resume();
    if (!checkContentType(req.headers["content-type"]).ok) {
      sendJson(res, 415, { error: ACTION_TYPE });
      return;
    }
    if (caller.identity?.via === "oauth" && !caller.operator) {
      sendJson(res, 403, { error: NOT_OPERATOR });
      return;
    }
    runServerAction(this.#gateway.hub, res, action, caller.profile).catch((error: Error) => {
      if (!res.headersSent) sendJson(res, 500, { error: `server action failed: ${error.message}` });
    });
  }

  /** The playground's frame for an MCP App (see `src/ext/apps/app-frame.ts`); it holds no data and needs no token. */
  #serveAppFrame(req: IncomingMessage, res: ServerResponse): void {
    const refused = this.#host.checkPage(req);
    if (refused !== undefined) {
      sendJson(res, refused.status, { error: refused.message });
      return;
    }
    const csp = cspFromQuery(new URL(req.url ?? "/", "http://frame").searchParams.get("csp"));
    const body = Buffer.from(APP_FRAME_HTML);
    res.writeHead(200, {
      "content-security-policy": appFramePolicy(csp),
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
      "content-type": "text/html; charset=utf-8",
      "content-length": body.length,
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  /** Where and how the page signs in: public (a public client's id), for the page before it has a token. */
  #serveSignIn(req: IncomingMessage, res: ServerResponse): void {
    const refused = this.#host.checkPage(req);
    if (refused !== undefined) {
      sendJson(res, refused.status, { error: refused.message });
      return;
    }
    if (this.#signIn === undefined) {
      sendJson(res, 404, {
        error: "this gateway has no sign-in (no auth: block in its config); use a token, if it asks for one",
      });
      return;
    }
    sendJson(res, 200, this.#signIn.settings(), { "cache-control": "no-store" });
  }

  async #serveAsset(
    req: IncomingMessage,
    res: ServerResponse,
    asset: { file: string; type: string },
  ): Promise<void> {
    const refused = this.#host.checkPage(req);
    if (refused !== undefined) {
      sendJson(res, refused.status, { error: refused.message });
      return;
    }
    // The document's policy is the one in force: only it needs the provider's origins.
    const headers =
      this.#signIn !== undefined && asset.file === "index.html"
        ? pageHeaders(await this.#signIn.connectSources())
        : PAGE_HEADERS;
    let body = this.#assets.get(asset.file);
    if (body === undefined) {
      body = readFile(new URL(asset.file, ASSET_DIR));
      this.#assets.set(asset.file, body);
    }
    body.then(
      (bytes) => {
        res.writeHead(200, { ...headers, "content-type": asset.type, "content-length": bytes.length });
        res.end(req.method === "HEAD" ? undefined : bytes);
      },
      (error: Error) => {
        this.#assets.delete(asset.file);
        sendJson(res, 500, { error: `dashboard file missing (${error.message}); reinstall mcplex` });
      },
    );
  }

  /** Sends feed events as `event: batch` messages until the client goes. */
  #stream(req: IncomingMessage, res: ServerResponse, profile: string | undefined, operator: boolean): void {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    res.write("retry: 2000\n\n");
    this.#streams.add(res);
    let queue: FeedEvent[] = [];
    let dropped = 0;
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      if (queue.length === 0) return;
      res.write(`event: batch\ndata: ${JSON.stringify({ events: queue, dropped })}\n\n`);
      queue = [];
      dropped = 0;
    };
    const unsubscribe = this.#feed.subscribe((event) => {
      if (event.type !== "changed" && profile !== undefined && event.call.profile !== profile) return;
      if (queue.length === BATCH_MAX) {
        queue.shift();
        dropped++;
      }
      queue.push(shownEvent(event, operator));
      timer ??= setTimeout(flush, FLUSH_MS);
    });
    const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), HEARTBEAT_MS);
    heartbeat.unref();
    const end = () => {
      unsubscribe();
      clearInterval(heartbeat);
      if (timer !== undefined) clearTimeout(timer);
      this.#streams.delete(res);
    };
    req.once("close", end);
    res.once("close", end);
  }
}

/**
 * A call as a viewer sees it: who made it (subject, client) only for operators. A token bound to
 * a profile sees the profile's calls, which other users of the profile make too: who they are is
 * not its business.
 */
function shownCall<T extends WatchedCall>(call: T, operator: boolean): T {
  if (operator) return call;
  const { subject: _s, client: _c, ...rest } = call;
  return rest as T;
}

/** A feed event as a viewer sees it (see {@link shownCall}). */
function shownEvent(event: FeedEvent, operator: boolean): FeedEvent {
  if (operator) return event;
  switch (event.type) {
    case "call-started":
      return { type: event.type, call: shownCall(event.call, false) };
    case "call-ended":
      return { type: event.type, call: shownCall(event.call, false) };
    default:
      return event;
  }
}

/** The result cache's counts of the servers shown (those with a lookup so far). */
function cacheOf(
  counts: ReadonlyMap<string, CacheCounts>,
  servers: ReadonlyArray<{ name: string }>,
): Record<string, CacheCounts> {
  const shown: Record<string, CacheCounts> = {};
  for (const { name } of servers) {
    const c = counts.get(name);
    if (c !== undefined) shown[name] = { ...c };
  }
  return shown;
}

/** `gateway.user` of the state: who a signed-in viewer is, as the gateway verified it. */
function userOf(viewer: { operator: boolean; identity?: Identity }): Record<string, unknown> {
  const identity = viewer.identity;
  if (identity?.via !== "oauth" || identity.subject === undefined) return {};
  return {
    user: {
      subject: identity.subject,
      ...(identity.issuer === undefined ? {} : { issuer: identity.issuer }),
      operator: viewer.operator,
    },
  };
}

/**
 * The dashboard as a page of the HTTP front, at `/dashboard` (and `/`, which leads there), with
 * the gateway's `auth:` block when it has one (the page then signs its user in):
 * `startHttpFront(gateway, { dashboard: dashboardPageWith({ signIn: config.auth }) })`, as
 * `serve()` does. With `credentials` (the per-user vault, the identity-to-user mapping of the
 * call path and the revoke function), it also serves `/api/connections` and `/api/users` (see
 * {@link ConnectionsApi}).
 */
export function dashboardPageWith(options: {
  signIn?: AuthConfig;
  credentials?: DashboardCredentials;
  rules?: () => RulesSource;
}): FrontPageFactory {
  return {
    path: "/dashboard",
    create: (gateway, host) =>
      new Dashboard(gateway, host, {
        mcp: host.mcp,
        ...(options.signIn === undefined ? {} : { signIn: options.signIn }),
        ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
        ...(options.rules === undefined ? {} : { rules: options.rules }),
      }),
  };
}

/** The dashboard without sign-in: `startHttpFront(gateway, { dashboard: dashboardPage })`. */
export const dashboardPage: FrontPageFactory = dashboardPageWith({});
