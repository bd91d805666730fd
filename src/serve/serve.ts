import type { AuditSink, AuditSinkEvent } from "../audit/audit-sink.js";
import type { ModeTable } from "../catalog-modes/view-resolver.js";
import type { Cluster, ClusterEvent } from "../cluster/cluster.js";
import { EXPOSED_PROFILE, exposedTokens, exposeTools } from "../config/expose-tools.js";
import { isPerUser } from "../config/read-credentials.js";
import type { CatalogMode, McplexConfig, TokenConfig } from "../config/types.js";
import type { CredentialVault } from "../credentials/user-credentials.js";
import type { Authenticator } from "../fronts/authenticator.js";
import type { HttpFront, HttpFrontOptions } from "../fronts/http-front.js";
import type { StdioFrontOptions } from "../fronts/stdio-front.js";
import type { ClientSession } from "../gateway/client-session.js";
import type { Gateway, GatewayOptions } from "../gateway/gateway.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import { type ReloadOutcome, watchConfig } from "../hub/config-reloader.js";
import { Hub } from "../hub/hub.js";
import type { HubOptions } from "../hub/hub-types.js";
import type { RequestSample } from "../interceptors/observing.js";
import type { CallWatcher } from "../interceptors/watching.js";
import type { ToolChange } from "../pins/tool-pins.js";
import { RELAYED_EXTENSIONS } from "../protocol/extensions.js";
import { ANSWERING_CAPABILITIES } from "../protocol/server-requests.js";
import type { SimulatedServer } from "../recording/simulated-servers.js";
import { telemetrySettings } from "../telemetry/settings.js";

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
  http?: Omit<HttpFrontOptions, "tokens" | "mcp" | "dashboard"> & {
    /** Serve the web dashboard at /dashboard. Default true. */
    dashboard?: boolean;
  };
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
   * every profile and to every token; see {@link exposeTools}.
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

/** What {@link serve} reports while it serves. */
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
  /** The audit trail (`audit:`) cannot write, writes again, refused calls, or lost lines at the end. */
  | AuditSinkEvent
  /** Sign-in (`auth:`): the identity provider could not be reached; what still works is said. */
  | { type: "auth"; message: string };

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
  const expose = options.exposeTools ?? [];
  const tokens = exposedTokens([...options.config.tokens, ...(options.tokens ?? [])], expose);
  const standIns = await standInsOf(options);
  const served = (next: McplexConfig, nextTokens: readonly TokenConfig[]) =>
    standIns(servedConfig(exposeTools(next, expose), options.noPrefix === true, nextTokens));
  const { config, simulated } = served(options.config, tokens);
  const profileName = options.profile ?? (expose.length > 0 ? EXPOSED_PROFILE : undefined);
  // Opened first: a file that cannot be opened stops the start before anything runs.
  const audit: AuditSink | undefined =
    config.audit === undefined
      ? undefined
      : await (await import("../audit/open-audit-sink.js")).openAuditSink(config.audit, {
          onEvent: (event) => options.onEvent?.(event),
        });
  const recorder = config.servers.some((s) => s.record !== undefined)
    ? (await import("../interceptors/traffic-recorder.js")).recorderFor(config, (server, error) =>
        options.onEvent?.({ type: "record-failed", server, error: error.message }),
      )
    : undefined;

  // Off unless the config or OTEL_* variables turn it on; then, and only then, it is loaded.
  const settings = telemetrySettings(config.telemetry);
  const telemetry =
    settings === undefined ? undefined : (await import("../telemetry/telemetry.js")).startTelemetry(settings);
  // One replica of several: loaded only then, and before the hub (whose OAuth tokens the
  // replicas share) and the gateway (which signs with the cluster's keys).
  let cluster: Cluster | undefined;
  let joinCluster: ((url: string) => Promise<void>) | undefined;
  let oauth = options.oauth;
  if (config.cluster !== undefined && options.transport === "http") {
    const { prepareCluster } = await import("../cluster/join-cluster.js");
    // The OAuth code brings the SDK client (and zod) with it: loaded when it is used, as here.
    const { memoryOAuthStore } = await import("../upstream/oauth.js");
    const joined = prepareCluster(
      config,
      (event) => options.onEvent?.({ type: "cluster", event }),
      options.http?.host ?? "127.0.0.1",
    );
    cluster = joined.cluster;
    joinCluster = joined.join;
    void cluster.connect();
    oauth = { ...oauth, store: cluster.oauthStore(oauth?.store ?? memoryOAuthStore()) };
  }
  const modules =
    config.interceptors === undefined
      ? undefined
      : await (await import("../hub/interceptor-modules.js")).loadInterceptorModules(config.interceptors);
  // Pinned servers only (loaded only then): their lock file, read before any server lists.
  const pins = [...config.servers, ...(config.available ?? [])].some(
    (s) => s.pin !== undefined && s.pin !== "off",
  )
    ? await (await import("../pins/open-pins.js")).openPins(config)
    : undefined;
  // Servers called with each user's own credentials (`credentials:`), when users sign in: the
  // vault, connect pages and sources, loaded only then.
  let frontOrigin: string | undefined;
  let authenticator: Authenticator | undefined;
  const credentials =
    config.auth !== undefined && [...config.servers, ...(config.available ?? [])].some(isPerUser)
      ? await (await import("../credentials/gateway-credentials.js")).gatewayCredentials({
          config,
          ...(options.credentialVault === undefined ? {} : { vault: options.credentialVault }),
          ...(cluster === undefined ? {} : { cluster }),
          frontOrigin: () => frontOrigin,
          authenticator: () => authenticator,
          server: (name) => hub.serverConfig(name),
        })
      : undefined;
  // The gateway answers server requests per call, for the client that caused them.
  const hub = new Hub({
    config,
    ...(pins === undefined ? {} : { pins }),
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
    interceptors: [...(modules?.interceptors ?? []), ...(options.interceptors ?? [])],
    upstreamInterceptors: [
      ...(telemetry === undefined ? [] : [telemetry.upstream]),
      ...(recorder === undefined ? [] : [recorder.interceptor]),
      ...(modules?.upstreamInterceptors ?? []),
    ],
  });
  recorder?.attach(hub);
  if (credentials !== undefined) credentials.closeUser = (user, server) => hub.closeUser(user, server);
  hub.on((event) => {
    if (event.type === "list-not-implemented" || event.type === "pin-changes") options.onEvent?.(event);
    if (event.type === "pin-changes") telemetry?.pinChanges(event.server, event.changes);
  });
  const started = hub.start();
  // Off the start path: servers ready before it loads are saved when it attaches.
  const uncache =
    options.toolCache === undefined ? undefined : (await import("../hub/tool-lists.js")).recordToolLists(hub);
  // Servers start first, and the gateway's code loads while they do: a client that spawns
  // `mcplex serve --stdio` per session waits for both, so they overlap (bench/startup-bench.ts).
  const { Gateway } = await import("../gateway/gateway.js");
  // Requests wait for servers still starting, but never past readyWait: one slow server must
  // not hide the others from a client that gives its first list a few seconds.
  const readyWait = options.readyWait ?? config.serve?.readyWait;
  const { viewResolver } = await import("../catalog-modes/view-resolver.js");
  const { viewEngines } = await import("../catalog-modes/view-engines.js");
  // Read per request, replaced when a reload brings other modes or profiles.
  let modes = modeTable(config, options.mode);
  const views = viewResolver(
    () => modes,
    viewEngines(config.serve?.code === undefined ? {} : { codeLimits: config.serve.code }),
  );
  const offerServers = config.serve?.serverTools === true;
  const { availableToolEntries } = await import("../catalog-modes/available-tool-entries.js");
  // Outside every other layer, the hub's included: the SERVER span covers what any layer does,
  // and the audit trail (inside the span, to name its trace) sees every refusal.
  const outer: Interceptor[] = telemetry === undefined ? [] : [telemetry.gateway];
  if (audit !== undefined) {
    const { auditLog } = await import("../interceptors/audit-log.js");
    outer.push(
      auditLog({
        sink: audit,
        redact: (text) => hub.redact(text),
        content: config.audit?.content === true,
        ...(config.audit?.maxLine === undefined ? {} : { maxLine: config.audit.maxLine }),
        ...(telemetry === undefined ? {} : { traceId: telemetry.traceId }),
      }),
    );
  }
  const gateway = new Gateway(hub, {
    views,
    ...(offerServers
      ? {
          availableTools: async (profile) =>
            availableToolEntries(await hub.availableTools(profile === undefined ? {} : { profile })),
        }
      : {}),
    ...(config.serve?.cache === undefined ? {} : { cache: config.serve.cache }),
    ready: started,
    ...(readyWait === undefined ? {} : { readyWait }),
    ...(outer.length === 0 ? {} : { outer }),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    ...(cluster === undefined
      ? {}
      : { replica: { id: cluster.replica, stateKey: cluster.stateKey, taskKey: cluster.taskKey } }),
  });
  if (credentials !== undefined) gateway.use(credentials.prompt);
  if (offerServers) {
    const { CONNECT_SERVER, DISCONNECT_SERVER, serverTools } = await import(
      "../interceptors/server-tools.js"
    );
    gateway.use(serverTools(hub), { answers: [CONNECT_SERVER, DISCONNECT_SERVER] });
  }
  const emit = options.onEvent ?? (() => {});
  let front: HttpFront | undefined;
  // Approvals made from outside (`mcplex trust` while serving) take effect at once.
  const pinWatcher =
    pins !== undefined && (options.watch ?? config.source !== "<default>")
      ? (await import("../pins/watch-pins.js")).watchPins(pins.path, () => {
          hub
            .reloadPins()
            .catch((error: Error) => emit({ type: "pin-lock-unreadable", error: error.message }));
        })
      : undefined;
  const watcher =
    (options.watch ?? config.source !== "<default>")
      ? watchConfig(
          hub,
          config,
          (outcome) => {
            if (outcome.ok) {
              const before = JSON.stringify(modes.default);
              modes = modeTable(outcome.config, options.mode);
              // Profiles announce themselves (the catalog changes); the default mode does not.
              if (JSON.stringify(modes.default) !== before) gateway.announce(["tools"]);
            }
            // What a reload applies (servers, profiles, tokens); `serve:` waits for a restart.
            if (outcome.ok) cluster?.setConfig({ ...outcome.config, serve: config.serve });
            emit({ type: "reloaded", outcome, ...reloadTokens(outcome, options, hub, front) });
          },
          { transform: (next) => served(next, exposedTokens(next.tokens, expose)).config },
        )
      : undefined;
  let stdio: RunningGateway["stdio"];
  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> => {
    closing ??= (async () => {
      watcher?.close();
      pinWatcher?.close();
      if (stdio !== undefined) {
        // Answers owed go out first (bounded), as on HTTP.
        await Promise.race([stdio.session.idle(), new Promise<void>((r) => setTimeout(r, graceMs).unref())]);
      }
      await front?.close(stdio === undefined ? graceMs : Math.min(graceMs, 1000));
      await cluster?.close();
      gateway.close();
      await hub.close();
      uncache?.();
      recorder?.close();
      // Every call has ended: its line is queued, and written before the process goes.
      await audit?.close();
      await telemetry?.shutdown();
    })();
    return closing;
  };
  try {
    const profile = profileName === undefined ? {} : { profile: profileName };
    if (options.transport === "stdio") {
      const { serveGatewayStdio } = await import("../fronts/stdio-front.js");
      stdio = serveGatewayStdio(gateway, { ...options.stdio, ...profile });
    }
    if (options.transport === "http" || options.http?.port !== undefined) {
      // Loaded only here: stdio needs none of the HTTP, WebSocket, dashboard and metrics code.
      const { startHttpFront } = await import("../fronts/http-front.js");
      const dashboard =
        options.http?.dashboard === false
          ? false
          : (await import("../dashboard/dashboard.js")).dashboardPageWith({
              ...(config.auth === undefined ? {} : { signIn: config.auth }),
              ...(credentials === undefined
                ? {}
                : {
                    credentials: {
                      vault: credentials.vault,
                      userOf: (await import("../credentials/user-ref.js")).userRefOf,
                      revoke: credentials.revoke,
                    },
                  }),
            });
      // Origins the config lists and those given to this run (`--allow-origin`) alike.
      const allowedOrigins = [
        ...(config.serve?.allowedOrigins ?? []),
        ...(options.http?.allowedOrigins ?? []),
      ];
      // Sign-in (`auth:`): its code, and jose's, loaded only then.
      authenticator =
        config.auth === undefined
          ? undefined
          : (await import("../auth/gateway-sign-in.js")).gatewaySignIn(config.auth, gateway, {
              tokens,
              host: options.http?.host ?? "127.0.0.1",
              onEvent: (message) => emit({ type: "auth", message }),
            });
      front = await startHttpFront(gateway, {
        ...frontLimits(config.serve),
        ...options.http,
        dashboard,
        ...(allowedOrigins.length === 0 ? {} : { allowedOrigins }),
        ...(authenticator === undefined ? {} : { authenticator }),
        tokens,
        ...(profileName === undefined || tokens.length > 0 ? {} : profile),
        ...(options.transport === "stdio" ? { mcp: false } : {}),
        ...(cluster === undefined ? {} : { cluster }),
        ...(credentials === undefined ? {} : { connect: credentials.pages }),
      });
      frontOrigin = new URL(front.url).origin;
      if (cluster !== undefined) cluster.registerMetrics(front.metrics.registry);
      await joinCluster?.(front.url);
    }
  } catch (error) {
    await close(0);
    throw error;
  }
  // Servers that did not start are reported when their start is over, however long it takes.
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
  return {
    hub,
    gateway,
    ...(front === undefined ? {} : { http: front }),
    ...(stdio === undefined ? {} : { stdio }),
    ...(cluster === undefined ? {} : { replica: cluster.replica }),
    ready: gateway.ready,
    started,
    simulated,
    observe: (observer) => gateway.observe(observer),
    watchCalls: (watcher) => gateway.watchCalls(watcher),
    close,
  };
}

/**
 * What replaces servers for `--record` and `--simulate` (loaded only then): recorded servers get
 * a `record` block, simulated ones become replays of a recording or simulators of a tool list.
 */
async function standInsOf(
  options: ServeOptions,
): Promise<(config: McplexConfig) => { config: McplexConfig; simulated: SimulatedServer[] }> {
  const { record, simulate } = options;
  const wanted = (config: McplexConfig) =>
    record !== undefined || simulate !== undefined || config.servers.some((s) => s.simulate === true);
  if (!wanted(options.config)) return (config) => ({ config, simulated: [] });
  const { recordedConfig, simulatedConfig } = await import("../recording/simulated-servers.js");
  const { defaultCacheDir } = await import("../recording/default-cache-dir.js");
  return (config) => {
    // Simulated servers read the recording directory; they never write to it.
    const recorded = record === undefined || simulate !== undefined ? config : recordedConfig(config, record);
    return simulatedConfig(recorded, {
      all: simulate?.all ?? false,
      seed: simulate?.seed ?? 1,
      cacheDir: simulate?.cacheDir ?? options.toolCache ?? defaultCacheDir(),
      ...(record === undefined ? {} : { recordDir: record }),
      ...(simulate?.speed === undefined ? {} : { speed: simulate.speed }),
    });
  };
}

/** Which catalog mode a client gets (see `viewResolver`): the `--tools` flag over `serve.mode`. */
function modeTable(config: McplexConfig, flag: CatalogMode | undefined): ModeTable {
  return {
    default: { mode: flag ?? config.serve?.mode ?? "all", pin: config.serve?.pin ?? [] },
    profiles: config.profiles,
  };
}

/** The config as served: a copy, with prefixes dropped when asked and every token redacted. */
function servedConfig(config: McplexConfig, noPrefix: boolean, tokens: readonly TokenConfig[]): McplexConfig {
  return {
    ...config,
    servers: noPrefix ? config.servers.map((server) => ({ ...server, prefix: "" })) : config.servers,
    ...(noPrefix && config.available !== undefined
      ? { available: config.available.map((server) => ({ ...server, prefix: "" })) }
      : {}),
    secrets: [...config.secrets, ...tokens.map((t) => t.token)],
  };
}

/** A reloaded config's tokens, with the command line's, handed to the HTTP front (stdio has none). */
function reloadTokens(
  outcome: ReloadOutcome,
  options: ServeOptions,
  hub: Hub,
  front: HttpFront | undefined,
): { tokens?: string } {
  if (!outcome.ok || !outcome.tokens) return {};
  if (front === undefined) return { tokens: "tokens ignored (stdio takes none)" };
  const next = [...outcome.config.tokens, ...exposedTokens(options.tokens ?? [], options.exposeTools ?? [])];
  try {
    front.setTokens(next);
    hub.addSecrets(next.map((t) => t.token)); // redacted like the first ones
    return { tokens: "tokens updated" };
  } catch (error) {
    return { tokens: (error as Error).message };
  }
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
