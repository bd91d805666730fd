import type { McplexConfig, TokenConfig } from "../config/types.js";
import type { Authenticator } from "../fronts/authenticator.js";
import type { HttpFront, HttpFrontOptions } from "../fronts/http-front.js";
import type { StdioFrontOptions } from "../fronts/stdio-front.js";
import type { ClientSession } from "../gateway/client-session.js";
import type { Gateway } from "../gateway/gateway.js";
import type { BuiltCluster } from "./build-cluster.js";
import { buildDashboard } from "./build-dashboard.js";
import type { GatewayCredentials } from "./gateway-credentials.js";

/** The HTTP front's options `serve()` takes: the front's own, and whether to serve the dashboard. */
export type ServeHttpOptions = Omit<HttpFrontOptions, "tokens" | "mcp" | "dashboard"> & {
  /** Serve the web dashboard at /dashboard. Default true. */
  dashboard?: boolean;
};

/**
 * The fronts `serve()` started, filled in as each starts: what its `close()` stops, whom a
 * reload hands new tokens, and what the connect pages ask.
 */
export interface StartedFronts {
  /** The stdio client's session, and a promise that settles when its input ends. */
  stdio?: { session: ClientSession; done: Promise<void> };
  http?: HttpFront;
  /** Who is calling over HTTP (`auth:`), made just before the HTTP front starts. */
  authenticator?: Authenticator;
}

/** What {@link buildFronts} is given. */
export interface BuildFrontsOptions {
  gateway: Gateway;
  config: McplexConfig;
  /** The config at work now (after reloads), whose rules the dashboard lists. */
  rules?: () => McplexConfig;
  transport: "stdio" | "http";
  http?: ServeHttpOptions;
  stdio?: Omit<StdioFrontOptions, "profile">;
  /** The config's and the command line's tokens. */
  tokens: TokenConfig[];
  /** The profile of clients that present no profile-bound token (and of the stdio client). */
  profileName?: string;
  cluster?: BuiltCluster;
  credentials?: GatewayCredentials;
  /** Sign-in (`auth:`): the identity provider could not be reached; what still works is said. */
  onAuthEvent: (message: string) => void;
}

/**
 * Starts the fronts of `serve()`: the stdio client's session on `transport: "stdio"`, and the
 * HTTP front on `transport: "http"` or when a port is given (the dashboard of a stdio gateway).
 * Each is put in `fronts` as it starts, so that a failure later stops those already running.
 */
export async function buildFronts(options: BuildFrontsOptions, fronts: StartedFronts): Promise<void> {
  if (options.transport === "stdio") {
    const { serveGatewayStdio } = await import("../fronts/stdio-front.js");
    fronts.stdio = serveGatewayStdio(options.gateway, {
      ...options.stdio,
      ...(options.profileName === undefined ? {} : { profile: options.profileName }),
    });
  }
  if (options.transport === "http" || options.http?.port !== undefined) await startHttp(options, fronts);
}

/** The HTTP front with its dashboard, sign-in and connect pages; then this replica joins its cluster. */
async function startHttp(options: BuildFrontsOptions, fronts: StartedFronts): Promise<void> {
  const { gateway, config, http, tokens, profileName, cluster, credentials, rules } = options;
  // Loaded only here: stdio needs none of the HTTP, WebSocket, dashboard and metrics code.
  const { startHttpFront } = await import("../fronts/http-front.js");
  const dashboard = http?.dashboard === false ? false : await buildDashboard(config, credentials, rules);
  // Origins the config lists and those given to this run (`--allow-origin`) alike.
  const allowedOrigins = [...(config.serve?.allowedOrigins ?? []), ...(http?.allowedOrigins ?? [])];
  // Sign-in (`auth:`): its code, and jose's, loaded only then.
  const authenticator =
    config.auth === undefined
      ? undefined
      : (await import("../auth/gateway-sign-in.js")).gatewaySignIn(config.auth, {
          tokens,
          host: http?.host ?? "127.0.0.1",
          onEvent: options.onAuthEvent,
          ...(cluster === undefined
            ? {}
            : { dpop: { replays: cluster.cluster.dpopReplays, nonceKey: cluster.cluster.dpopNonceKey } }),
        });
  if (authenticator !== undefined) fronts.authenticator = authenticator;
  const front = await startHttpFront(gateway, {
    ...frontLimits(config.serve),
    ...http,
    dashboard,
    ...(allowedOrigins.length === 0 ? {} : { allowedOrigins }),
    ...(authenticator === undefined ? {} : { authenticator }),
    tokens,
    ...(profileName === undefined || tokens.length > 0 ? {} : { profile: profileName }),
    ...(options.transport === "stdio" ? { mcp: false } : {}),
    ...(cluster === undefined ? {} : { cluster: cluster.cluster }),
    ...(credentials === undefined ? {} : { connect: credentials.pages }),
    ...(config.serve?.cards === false ? { cards: false } : {}),
  });
  fronts.http = front;
  if (cluster !== undefined) cluster.cluster.registerMetrics(front.metrics.registry);
  await cluster?.join(front.url);
}

/** The HTTP front's limits the config's `serve:` block sets (flags, in `options.http`, win). */
function frontLimits(
  serve: McplexConfig["serve"],
): Pick<HttpFrontOptions, "idleTimeoutMs" | "maxConnections" | "maxConnectionsPerClient" | "memoryBudget"> {
  if (serve === undefined) return {};
  return {
    ...(serve.idleTimeout === undefined ? {} : { idleTimeoutMs: serve.idleTimeout }),
    ...(serve.maxConnections === undefined ? {} : { maxConnections: serve.maxConnections }),
    ...(serve.maxConnectionsPerClient === undefined
      ? {}
      : { maxConnectionsPerClient: serve.maxConnectionsPerClient }),
    ...(serve.memoryBudget === undefined ? {} : { memoryBudget: serve.memoryBudget }),
  };
}
