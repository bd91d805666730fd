import type { Cluster } from "../cluster/cluster.js";
import { exposedTokens } from "../config/expose-tools.js";
import type { McplexConfig, TokenConfig } from "../config/types.js";
import type { HttpFront } from "../fronts/http-front.js";
import type { Hub } from "../hub/hub.js";
import type { ToolPins } from "../pins/tool-pins.js";
import { type ReloadOutcome, watchConfig } from "../servers/config-reloader.js";
import type { StartedFronts } from "./build-fronts.js";
import type { ServeEvent } from "./serve-event.js";

/** What {@link watchServed} is given. */
export interface WatchServedOptions {
  hub: Hub;
  /** The config as served. */
  config: McplexConfig;
  /** Re-read the config file when it is saved (default: when the config came from a file). */
  watch?: boolean;
  pins?: ToolPins;
  /** A reloaded config as served (see `servedConfigOf`). */
  reserve: (next: McplexConfig) => McplexConfig;
  /** Hands the gateway a reloaded config's modes and profiles, and the hub its policies. */
  applyReload: (next: McplexConfig) => Promise<void>;
  cluster?: Cluster;
  /** The command line's tokens and exposed tools, added to a reloaded config's tokens. */
  tokens?: TokenConfig[];
  exposeTools?: readonly string[];
  /** The fronts, whose HTTP front takes a reloaded config's tokens. */
  fronts: StartedFronts;
  emit: (event: ServeEvent) => void;
}

/**
 * Applies what is saved while `serve()` runs: the config file (servers, profiles, modes, tokens;
 * `serve:` waits for a restart), and approvals of pinned tools made from outside (`mcplex trust`).
 */
export async function watchServed(options: WatchServedOptions): Promise<{ close(): void }> {
  const { hub, config, pins, emit } = options;
  const watching = options.watch ?? config.source !== "<default>";
  // Approvals made from outside (`mcplex trust` while serving) take effect at once.
  const pinWatcher =
    pins !== undefined && watching
      ? (await import("../pins/watch-pins.js")).watchPins(pins.path, () => {
          hub
            .reloadPins()
            .catch((error: Error) => emit({ type: "pin-lock-unreadable", error: error.message }));
        })
      : undefined;
  const watcher = watching
    ? watchConfig(
        hub,
        config,
        async (outcome) => {
          if (outcome.ok) await options.applyReload(outcome.config);
          // What a reload applies (servers, profiles, tokens); `serve:` waits for a restart.
          if (outcome.ok) options.cluster?.setConfig({ ...outcome.config, serve: config.serve });
          emit({ type: "reloaded", outcome, ...reloadTokens(outcome, options, options.fronts.http) });
        },
        { transform: options.reserve },
      )
    : undefined;
  return {
    close: () => {
      watcher?.close();
      pinWatcher?.close();
    },
  };
}

/** A reloaded config's tokens, with the command line's, handed to the HTTP front (stdio has none). */
function reloadTokens(
  outcome: ReloadOutcome,
  options: WatchServedOptions,
  front: HttpFront | undefined,
): { tokens?: string } {
  if (!outcome.ok || !outcome.tokens) return {};
  if (front === undefined) return { tokens: "tokens ignored (stdio takes none)" };
  const next = [...outcome.config.tokens, ...exposedTokens(options.tokens ?? [], options.exposeTools ?? [])];
  try {
    front.setTokens(next);
    options.hub.addSecrets(next.map((t) => t.token)); // redacted like the first ones
    return { tokens: "tokens updated" };
  } catch (error) {
    return { tokens: (error as Error).message };
  }
}
