import type { AuditSink } from "../audit/audit-sink.js";
import type { ModeTable } from "../catalog-modes/view-resolver.js";
import type { Cluster } from "../cluster/cluster.js";
import type { CatalogMode, McplexConfig } from "../config/types.js";
import type { Gateway, GatewayOptions } from "../gateway/gateway.js";
import type { Interceptor } from "../hub/call-pipeline.js";
import type { Hub } from "../hub/hub.js";
import type { GatewayCredentials } from "./gateway-credentials.js";
import type { Telemetry } from "./telemetry.js";

/** What {@link buildGateway} is given. */
export interface BuildGatewayOptions {
  hub: Hub;
  config: McplexConfig;
  /** Settles when every server's first start is over. */
  started: Promise<void>;
  /** The `--tools` flag, over `serve.mode`. */
  mode?: CatalogMode;
  /** How long requests wait for servers still starting (ms), over `serve.readyWait`. */
  readyWait?: number;
  identity?: GatewayOptions["identity"];
  telemetry?: Telemetry;
  audit?: AuditSink;
  cluster?: Cluster;
  credentials?: GatewayCredentials;
}

/** A gateway {@link buildGateway} made, and how it follows a reloaded config. */
export interface BuiltGateway {
  gateway: Gateway;
  /** Takes a reloaded config's modes and profiles (announcing a new catalog when the default mode changed). */
  reloadModes(next: McplexConfig): void;
}

/**
 * The gateway over a started hub, with its layers: catalog modes and profiles, the tracing span
 * and the audit trail outside every other layer, the cache, the per-user connect prompt and the
 * server tools (`serve.serverTools`). Its code loads while the servers start.
 */
export async function buildGateway(options: BuildGatewayOptions): Promise<BuiltGateway> {
  const { hub, config, cluster } = options;
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
  const outer = await outerLayers(options);
  const gateway = new Gateway(hub, {
    views,
    ...(offerServers
      ? {
          availableTools: async (profile) =>
            availableToolEntries(await hub.availableTools(profile === undefined ? {} : { profile })),
        }
      : {}),
    ...(config.serve?.cache === undefined ? {} : { cache: config.serve.cache }),
    ready: options.started,
    ...(readyWait === undefined ? {} : { readyWait }),
    ...(outer.length === 0 ? {} : { outer }),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    ...(cluster === undefined
      ? {}
      : { replica: { id: cluster.replica, stateKey: cluster.stateKey, taskKey: cluster.taskKey } }),
  });
  if (options.credentials !== undefined) gateway.use(options.credentials.prompt);
  if (offerServers) {
    const { CONNECT_SERVER, DISCONNECT_SERVER, serverTools } = await import(
      "../interceptors/server-tools.js"
    );
    gateway.use(serverTools(hub), { answers: [CONNECT_SERVER, DISCONNECT_SERVER] });
  }
  const reloadModes = (next: McplexConfig) => {
    const before = JSON.stringify(modes.default);
    modes = modeTable(next, options.mode);
    // Profiles announce themselves (the catalog changes); the default mode does not.
    if (JSON.stringify(modes.default) !== before) gateway.announce(["tools"]);
  };
  return { gateway, reloadModes };
}

/**
 * The layers outside every other, the hub's included: the SERVER span covers what any layer does,
 * and the audit trail (inside the span, to name its trace) sees every refusal.
 */
async function outerLayers(options: BuildGatewayOptions): Promise<Interceptor[]> {
  const { telemetry, audit, hub, config } = options;
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
  return outer;
}

/** Which catalog mode a client gets (see `viewResolver`): the `--tools` flag over `serve.mode`. */
function modeTable(config: McplexConfig, flag: CatalogMode | undefined): ModeTable {
  return {
    default: { mode: flag ?? config.serve?.mode ?? "all", pin: config.serve?.pin ?? [] },
    profiles: config.profiles,
  };
}
