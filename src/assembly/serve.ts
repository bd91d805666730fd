import type { AuditSink } from "../audit/audit-sink.js";
import type { CatalogMode, McplexConfig, TokenConfig } from "../config/types.js";
import type { CredentialVault } from "../credentials/user-credentials.js";
import { RELAYED_EXTENSIONS } from "../ext/apps/apps-extension.js";
import type { HttpFront } from "../fronts/http-front.js";
import type { StdioFrontOptions } from "../fronts/stdio-front.js";
import type { ClientSession } from "../gateway/client-session.js";
import type { Gateway, GatewayOptions } from "../gateway/gateway.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import type { HubOptions } from "../hub/hub-types.js";
import type { RequestSample } from "../interceptors/observing.js";
import type { CallWatcher } from "../interceptors/watching.js";
import { ANSWERING_CAPABILITIES } from "../protocol/server-requests.js";
import type { SimulatedServer } from "../recording/simulated-servers.js";
import { buildAudit } from "./build-audit.js";
import type { BuiltCluster } from "./build-cluster.js";
import { buildCluster } from "./build-cluster.js";
import { buildCredentials } from "./build-credentials.js";
import { buildFronts, type ServeHttpOptions, type StartedFronts } from "./build-fronts.js";
import { buildGateway } from "./build-gateway.js";
import { type BuiltHub, buildHub } from "./build-hub.js";
import { buildTelemetry } from "./build-telemetry.js";
import type { GatewayCredentials } from "./gateway-credentials.js";
import type { ServeEvent } from "./serve-event.js";
import { servedConfigOf } from "./served-config.js";
import type { Telemetry } from "./telemetry.js";
import { watchServed } from "./watch-served.js";

export type { ServeEvent } from "./serve-event.js";

/** What {@link serve} serves, and how. */
export interface ServeOptions {
  /** The config (as `loadConfig` returns it). Never changed: serve works on its own copy. */
  config: McplexConfig;
  /**
   * `stdio`: one client on the process's stdin and stdout (or `stdio.input`/`output`), with the
   * dashboard on `http` when `http.port` is given. `http`: Streamable HTTP at /mcp, WebSocket at
   * /ws, HTTP+SSE at /sse, health, metrics and the dashboard.
   */
  transport: "stdio" | "http";
  /** The HTTP front (or, with `transport: "stdio"`, the dashboard's port when `port` is set). */
  http?: ServeHttpOptions;
  /** The stdio front's streams and limits (default: the process's stdin and stdout). */
  stdio?: Omit<StdioFrontOptions, "profile">;
  /** Tokens besides the config's (e.g. from the command line); their values are redacted too. */
  tokens?: TokenConfig[];
  /** The catalog view of clients that present no profile-bound token (and of the stdio client). */
  profile?: string;
  /**
   * How clients see the tools (`--tools`): `all`, `search` (meta-tools to find, describe and
   * call them) or `code` (a sandboxed `run_code`). Over `serve.mode`; a client's token or
   * profile may still set its own. Default: `serve.mode`, else `all`.
   */
  mode?: CatalogMode;
  /** Expose every server's tools without their `server__` prefix. */
  noPrefix?: boolean;
  /**
   * Serve only the tools whose exposed names match one of these globs (`--expose-tool`), in
   * every profile and to every token; see `exposeTools` (src/config/expose-tools.ts).
   */
  exposeTools?: readonly string[];
  /** How long requests wait for servers still starting (ms); default `config.serve.readyWait`, else 1 s. */
  readyWait?: number;
  /**
   * Layers on the path of every call, the first outermost (see {@link Interceptor}): the hub's,
   * after the config's `interceptors:` modules. They run outside the gateway's own layers (the
   * tracing interceptor when telemetry is on, metrics, the dashboard, caching, catalog modes).
   */
  interceptors?: readonly Interceptor[];
  /** Name, version and instructions the gateway reports. */
  identity?: GatewayOptions["identity"];
  /** Token store and user prompt for servers configured with `oauth`. */
  oauth?: HubOptions["oauth"];
  /** Re-read the config file when it is saved (default: when the config came from a file). */
  watch?: boolean;
  /** What happens while serving, for a log: reloads, and servers that did not start. */
  onEvent?: (event: ServeEvent) => void;
  /** Record every server's traffic in this directory (`--record DIR`; docs/recording-format.md). */
  record?: string;
  /**
   * Serve every server's recording (found in `record`, else its `record.dir`), else a simulator
   * made from its cached tool list, instead of the server (`--simulate`). Without it, only
   * servers with `simulate: true` are replaced.
   */
  simulate?: { seed: number; cacheDir: string; speed?: number; all: boolean };
  /**
   * Keep the tool lists of servers that run for real in this cache directory, for `simulate`
   * (and for `available:` servers while they are stopped): the hub's `toolCache`.
   */
  toolCache?: string;
  /**
   * Where users' credentials for per-user servers (`credentials:`) are kept. Default: the file
   * vault beside the secret store (`credentials.json`), or Redis with `cluster:`.
   */
  credentialVault?: CredentialVault;
}

/** A gateway {@link serve} started. */
export interface RunningGateway {
  readonly hub: Hub;
  readonly gateway: Gateway;
  /** The HTTP front (absent on stdio without a dashboard port). */
  readonly http?: HttpFront;
  /** The stdio client's session, and a promise that settles when its input ends. */
  readonly stdio?: { session: ClientSession; done: Promise<void> };
  /** This replica's id in its cluster (`cluster:`). */
  readonly replica?: string;
  /** Settles when requests are served: the first start is over or `readyWait` has passed. */
  readonly ready: Promise<unknown>;
  /** Every server's first start is over (each ready or failed). */
  readonly started: Promise<void>;
  /** The servers replaced by a recording or a simulator, and by which. */
  readonly simulated: readonly SimulatedServer[];
  /** Receives one sample per request (an interceptor); returns its remover. */
  observe(observer: (sample: RequestSample) => void): () => void;
  /** Sees forwarded calls start and end; returns its remover. */
  watchCalls(watcher: CallWatcher): () => void;
  /**
   * Stops: the HTTP front lets requests in flight answer (up to `graceMs`, default 10 s) and
   * the stdio session answers what it owes; then the gateway, the config watch and every
   * server stop. Safe to call twice.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves a config's servers as one MCP server, as `mcplex serve` does: starts the hub, the
 * gateway and the front, re-reads the config file when it is saved, and reports servers that
 * did not start. The HTTP code is loaded only when HTTP is served.
 *
 * @example
 * const running = await serve({ config: await loadConfig(), transport: "http", http: { port: 8420 } });
 * log.info(`serving at ${running.http?.url}`);
 * process.on("SIGTERM", () => void running.close());
 */
export async function serve(options: ServeOptions): Promise<RunningGateway> {
  const served = await servedConfigOf(options);
  const { config } = served;
  const emit = options.onEvent ?? (() => {});
  // Opened first: a file that cannot be opened stops the start before anything runs.
  const audit = await buildAudit(config, emit);
  const telemetry = await buildTelemetry(config);
  const cluster = await buildCluster(
    config,
    { transport: options.transport, oauth: options.oauth, host: options.http?.host },
    (event) => emit({ type: "cluster", event }),
  );
  const fronts: StartedFronts = {};
  const { hub, built, credentials } = await servedHub(options, config, { cluster, telemetry, fronts, emit });
  const started = hub.start();
  // Off the start path: servers ready before it loads are saved when it attaches.
  const uncache =
    options.toolCache === undefined
      ? undefined
      : (await import("../servers/tool-lists.js")).recordToolLists(hub);
  const { gateway, reloadModes } = await buildGateway({
    hub,
    config,
    started,
    mode: options.mode,
    readyWait: options.readyWait,
    identity: options.identity,
    telemetry,
    audit,
    cluster: cluster?.cluster,
    credentials,
  });
  // The config whose rules are at work now, for the dashboard's list of them.
  let inForce = config;
  const watchers = await watchServed({
    hub,
    config,
    watch: options.watch,
    pins: built.pins,
    reserve: served.reserve,
    applyReload: async (next) => {
      inForce = next;
      reloadModes(next);
      await built
        .setRules(next)
        .catch((error: Error) => emit({ type: "policies-failed", error: error.message }));
    },
    cluster: cluster?.cluster,
    tokens: options.tokens,
    exposeTools: options.exposeTools,
    fronts,
    emit,
  });
  const parts = { hub, gateway, fronts, watchers, built, uncache, cluster, audit, telemetry };
  const close = closeOnce((graceMs) => closeServed(parts, graceMs));
  try {
    await buildFronts(
      {
        gateway,
        config,
        transport: options.transport,
        http: options.http,
        stdio: options.stdio,
        tokens: served.tokens,
        profileName: served.profileName,
        cluster,
        credentials,
        rules: () => inForce,
        onAuthEvent: (message) => emit({ type: "auth", message }),
      },
      fronts,
    );
  } catch (error) {
    await close(0);
    throw error;
  }
  reportStartFailures(hub, started, emit);
  return {
    hub,
    gateway,
    ...(fronts.http === undefined ? {} : { http: fronts.http }),
    ...(fronts.stdio === undefined ? {} : { stdio: fronts.stdio }),
    ...(cluster === undefined ? {} : { replica: cluster.cluster.replica }),
    ready: gateway.ready,
    started,
    simulated: served.simulated,
    observe: (observer) => gateway.observe(observer),
    watchCalls: (watcher) => gateway.watchCalls(watcher),
    close,
  };
}

/** The hub of `serve()`, and the per-user credentials it calls servers with (`credentials:`). */
async function servedHub(
  options: ServeOptions,
  config: McplexConfig,
  parts: {
    cluster: BuiltCluster | undefined;
    telemetry: Telemetry | undefined;
    fronts: StartedFronts;
    emit: (event: ServeEvent) => void;
  },
): Promise<{ hub: Hub; built: BuiltHub; credentials: GatewayCredentials | undefined }> {
  const { cluster, telemetry, fronts, emit } = parts;
  let built: BuiltHub | undefined;
  const credentials = await buildCredentials({
    config,
    vault: options.credentialVault,
    cluster: cluster?.cluster,
    frontOrigin: () => (fronts.http === undefined ? undefined : new URL(fronts.http.url).origin),
    authenticator: () => fronts.authenticator,
    server: (name) => built?.hub.serverConfig(name),
  });
  const oauth = cluster === undefined ? options.oauth : cluster.oauth;
  built = await buildHub({
    config,
    ...(cluster === undefined ? {} : { quotaStore: cluster.cluster.quotaStore }),
    hub: {
      // The gateway answers server requests per call, for the client that caused them.
      clientCapabilities: { ...ANSWERING_CAPABILITIES, extensions: RELAYED_EXTENSIONS },
      ...(oauth === undefined ? {} : { oauth }),
      ...(options.toolCache === undefined ? {} : { toolCache: options.toolCache }),
      ...(credentials === undefined
        ? {}
        : {
            vault: credentials.vault,
            userCredentials: credentials.source,
            connectUrl: credentials.connectUrl,
          }),
    },
    interceptors: options.interceptors,
    telemetry,
    onRecordFailed: (server, error) => emit({ type: "record-failed", server, error: error.message }),
  });
  const { hub } = built;
  if (credentials !== undefined) credentials.closeUser = (user, server) => hub.closeUser(user, server);
  forwardHubEvents(hub, emit, telemetry);
  return { hub, built, credentials };
}

/** The hub's events `serve()` reports, and pinned tools that changed, counted when telemetry is on. */
function forwardHubEvents(
  hub: Hub,
  emit: (event: ServeEvent) => void,
  telemetry: Telemetry | undefined,
): void {
  hub.on((event) => {
    if (event.type === "list-not-implemented" || event.type === "pin-changes") emit(event);
    if (event.type === "pin-changes") telemetry?.pinChanges(event.server, event.changes);
  });
}

/** Reports the servers that did not start when their start is over, however long it takes. */
function reportStartFailures(hub: Hub, started: Promise<void>, emit: (event: ServeEvent) => void): void {
  void started.then(() => {
    for (const server of hub.servers()) {
      if (server.error === undefined || ["ready", "disabled", "stopped"].includes(server.state)) continue;
      emit({
        type: "start-failed",
        server: server.name,
        state: server.state,
        error: server.error.split("\n")[0]!,
        ...(server.hint === undefined ? {} : { hint: server.hint }),
      });
    }
  });
}

/** A `close` safe to call twice: the second call gets the first's promise. */
function closeOnce(close: (graceMs: number) => Promise<void>): (graceMs?: number) => Promise<void> {
  let closing: Promise<void> | undefined;
  return (graceMs = 10_000) => {
    closing ??= close(graceMs);
    return closing;
  };
}

/** What `serve()` started, stopped in order (see {@link RunningGateway.close}). */
async function closeServed(
  parts: {
    hub: Hub;
    gateway: Gateway;
    fronts: StartedFronts;
    watchers: { close(): void };
    built: BuiltHub;
    uncache: (() => void) | undefined;
    cluster: BuiltCluster | undefined;
    audit: AuditSink | undefined;
    telemetry: Telemetry | undefined;
  },
  graceMs: number,
): Promise<void> {
  const { stdio, http } = parts.fronts;
  parts.watchers.close();
  if (stdio !== undefined) {
    // Answers owed go out first (bounded), as on HTTP.
    await Promise.race([stdio.session.idle(), new Promise<void>((r) => setTimeout(r, graceMs).unref())]);
  }
  await http?.close(stdio === undefined ? graceMs : Math.min(graceMs, 1000));
  await parts.cluster?.cluster.close();
  parts.gateway.close();
  await parts.hub.close();
  parts.uncache?.();
  parts.built.closeRecorder();
  // Every call has ended: its line is queued, and written before the process goes.
  await parts.audit?.close();
  await parts.telemetry?.shutdown();
}
