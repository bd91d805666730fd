import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { defaultSecretStorePath } from "../config/secret-store.js";
import type { ServerConfig } from "../config/types.js";
import type { HubEvent, ServerDetails, ServerStatus } from "../hub/hub-types.js";
import { defaultCacheDir } from "../recording/default-cache-dir.js";
import { ToolListStore } from "../recording/tool-list-store.js";
import { connectionKey } from "./connection-key.js";

/**
 * A hash of what makes a server's connection (its {@link connectionKey}): kept with its tool
 * list, so a changed command or URL makes the list stale, without putting env values or headers
 * (which may be secrets) on disk.
 */
export function definitionHash(server: ServerConfig): string {
  return createHash("sha256").update(connectionKey(server)).digest("hex");
}

/**
 * The hub's {@link ToolListStore}: in `toolCache` (a directory), else in the default cache
 * directory when the config has `available:` servers (whose lists are shown while they are
 * stopped), else in memory. With the default, the one-file cache earlier versions kept beside
 * the secret store (`tool-cache.json`) is still read.
 */
export function hubToolLists(
  toolCache: string | false | undefined,
  hasAvailable: boolean,
  redact: (text: string) => string,
): ToolListStore {
  if (toolCache !== undefined) return new ToolListStore({ dir: toolCache || undefined, redact });
  if (!hasAvailable) return new ToolListStore({ redact });
  const legacyFile = join(dirname(defaultSecretStorePath()), "tool-cache.json");
  return new ToolListStore({ dir: defaultCacheDir(), redact, legacyFile });
}

/** What {@link recordToolLists} reads of the hub. */
export interface RecordedHub {
  readonly toolLists: ToolListStore;
  servers(): ServerStatus[];
  serverDetails(name: string): ServerDetails | undefined;
  serverConfig(name: string): ServerConfig | undefined;
  on(listener: (event: HubEvent) => void): () => void;
}

/**
 * Saves the tool list of every server the hub runs for real in `hub.toolLists`, each time it
 * becomes ready or lists anew, so that `mcplex serve --simulate` can stand in for it later.
 * Returns the detach function. Saving is best effort: serving must not fail for a cache.
 */
export function recordToolLists(hub: RecordedHub): () => void {
  const save = (server: string) => {
    const status = hub.servers().find((s) => s.name === server);
    const details = hub.serverDetails(server);
    const config = hub.serverConfig(server);
    if (status?.simulated !== undefined || details === undefined || config === undefined) return;
    void hub.toolLists
      .save({
        server,
        definition: definitionHash(config),
        tools: details.tools as unknown as Record<string, unknown>[],
        ...(details.serverInfo === undefined
          ? {}
          : { serverInfo: { name: details.serverInfo.name, version: details.serverInfo.version } }),
      })
      .catch(() => {});
  };
  const off = hub.on((event) => {
    if (event.type === "server-state" && event.state === "ready") save(event.server);
    else if (event.type === "catalog-changed") for (const server of event.servers) save(server);
  });
  for (const status of hub.servers()) if (status.state === "ready") save(status.name);
  return off;
}
