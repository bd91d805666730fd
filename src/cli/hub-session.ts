import { setTimeout as delay } from "node:timers/promises";
import { type BuiltHub, buildHub } from "../assembly/build-hub.js";
import { buildTelemetry } from "../assembly/build-telemetry.js";
import type { Telemetry } from "../assembly/telemetry.js";
import { loadConfig } from "../config/load-config.js";
import type { McplexConfig } from "../config/types.js";
import type { Hub } from "../hub/hub.js";
import { secretOAuthStore } from "./oauth-login.js";

/**
 * Which servers a command starts: `"enabled"` the enabled non-lazy ones (as `serve` does),
 * `"all"` lazy ones too, or the named servers only (lazy or not).
 */
export type StartPlan = "enabled" | "all" | readonly string[];

/** How long `run` may take to wind down (a server's task cancelled) after SIGINT/SIGTERM. */
const WIND_DOWN_MS = 2000;

/**
 * Loads the config (a `--config` path, or found; or one already loaded), starts a hub,
 * and makes sure it is closed (children stopped) on SIGINT/SIGTERM as well as after `run`
 * returns. `onHub` sees the hub before it starts. `run`'s signal aborts at SIGINT/SIGTERM, and
 * `run` gets a moment to wind down (a call waiting on a task cancels it) before the hub closes.
 */
export async function withHub<T>(
  options: { config?: string | McplexConfig; start?: StartPlan; onHub?: (hub: Hub) => void },
  run: (
    hub: Hub,
    config: McplexConfig,
    telemetry: Telemetry | undefined,
    signal: AbortSignal,
    built: Pick<BuiltHub, "hides">,
  ) => Promise<T>,
): Promise<T> {
  const loaded =
    typeof options.config === "object"
      ? options.config
      : await loadConfig(options.config === undefined ? {} : { config: options.config });
  const config = await withSimulatedServers(loaded);
  // The hub's calls start traces of their own when telemetry is on (loaded only then).
  const telemetry = await buildTelemetry(config);
  // As `serve` builds it: servers with `record:` are recorded (`mcplex call` can make a recording),
  // the config's own interceptors see the command's calls, and pinned servers show what `serve`
  // would hold.
  const built = await buildHub({
    config,
    hub: { oauth: { store: secretOAuthStore() } },
    telemetry,
    onRecordFailed: (server, error) =>
      console.error(`mcplex: recording of ${server} stopped: ${error.message}`),
  });
  const { hub, closeRecorder } = built;
  options.onHub?.(hub);
  const interrupted = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  const stop = (signal: NodeJS.Signals) => {
    interrupted.abort(new Error(`interrupted (${signal})`));
    const woundDown = Promise.race([running.catch(() => {}), delay(WIND_DOWN_MS, undefined, { ref: false })]);
    void woundDown.then(() => hub.close()).finally(() => process.kill(process.pid, signal));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await startServers(hub, config, options.start ?? "enabled");
    const result = run(hub, config, telemetry, interrupted.signal, built);
    running = result;
    return await result;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await hub.close();
    closeRecorder();
    await telemetry?.shutdown();
  }
}

/**
 * The config with its `simulate: true` servers replaced by their recording or a simulator of
 * their cached tool list (loaded only when one asks for it), as `mcplex serve` does.
 */
async function withSimulatedServers(config: McplexConfig): Promise<McplexConfig> {
  if (!config.servers.some((server) => server.simulate === true)) return config;
  const { simulatedConfig } = await import("../recording/simulated-servers.js");
  const { defaultCacheDir } = await import("../recording/default-cache-dir.js");
  return simulatedConfig(config, { all: false, seed: 1, cacheDir: defaultCacheDir() }).config;
}

/**
 * Starts the servers of `plan` concurrently; resolves when each is ready or has failed
 * (a failure shows in `hub.servers()`, never as a rejection).
 */
export async function startServers(hub: Hub, config: McplexConfig, plan: StartPlan): Promise<void> {
  if (plan === "enabled") return hub.start();
  const names = plan === "all" ? config.servers.filter((s) => s.enabled && s.lazy).map((s) => s.name) : plan;
  await Promise.all([
    plan === "all" ? hub.start() : undefined,
    ...names.map((n) => hub.startServer(n).catch(() => {})),
  ]);
}
