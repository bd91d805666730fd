import { loadConfig } from "../config/load-config.js";
import type { McplexConfig } from "../config/types.js";
import { Hub } from "../hub.js";
import { secretOAuthStore } from "./oauth-login.js";

/**
 * Loads the config (a `--config` path, or found; or one already loaded), starts a hub,
 * and makes sure it is closed (children stopped) on SIGINT/SIGTERM as well as after `run`
 * returns. `onHub` sees the hub before it starts.
 */
export async function withHub<T>(
  options: { config?: string | McplexConfig; startLazy?: boolean; onHub?: (hub: Hub) => void },
  run: (hub: Hub, config: McplexConfig) => Promise<T>,
): Promise<T> {
  const config =
    typeof options.config === "object"
      ? options.config
      : await loadConfig(options.config === undefined ? {} : { config: options.config });
  const hub = new Hub({ config, oauth: { store: secretOAuthStore() } });
  options.onHub?.(hub);
  const stop = (signal: NodeJS.Signals) => {
    void hub.close().finally(() => process.kill(process.pid, signal));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    await hub.start();
    if (options.startLazy === true) {
      const lazy = config.servers
        .filter((s) => s.enabled && s.lazy)
        .map((s) => hub.startServer(s.name).catch(() => {}));
      await Promise.all(lazy);
    }
    return await run(hub, config);
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await hub.close();
  }
}
