import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import type { Tool } from "@modelcontextprotocol/client";
import { defaultSecretStorePath } from "../config/secret-store.js";
import type { ServerConfig } from "../config/types.js";
import type { Implementation } from "../protocol/rev2026.js";
import { defaultCacheDir } from "../recording/default-cache-dir.js";
import { ToolListStore } from "../recording/tool-list-store.js";
import { connectionKey } from "./connection-key.js";
import type { ServerDetails, ServerEvent, ServerStatus } from "./server-types.js";

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

/**
 * Saves `tools` in `store` as the last-seen list of the server `config` defines, with the hash of
 * its definition (and how it introduced itself, when given): the one place the tool-list cache is
 * written, whether by {@link recordToolLists} or by an `available:` server's connect and disconnect.
 */
export function recordToolList(
  store: ToolListStore,
  config: ServerConfig,
  tools: readonly Tool[],
  serverInfo?: Implementation,
): Promise<void> {
  return store.save({
    server: config.name,
    definition: definitionHash(config),
    tools: tools as unknown as Record<string, unknown>[],
    ...(serverInfo === undefined
      ? {}
      : { serverInfo: { name: serverInfo.name, version: serverInfo.version } }),
  });
}

/** What {@link recordToolLists} reads of the hub. */
export interface RecordedHub {
  readonly toolLists: ToolListStore;
  servers(): ServerStatus[];
  serverDetails(name: string): ServerDetails | undefined;
  serverConfig(name: string): ServerConfig | undefined;
  /** Its events: the servers' among others (a hub also tells of decisions), told apart by `type`. */
  on(listener: (event: ServerEvent | { type: "decision" }) => void): () => void;
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
    void recordToolList(hub.toolLists, config, details.tools, details.serverInfo).catch(() => {});
  };
  const off = hub.on((event) => {
    if (event.type === "server-state" && event.state === "ready") save(event.server);
    else if (event.type === "catalog-changed") for (const server of event.servers) save(server);
  });
  for (const status of hub.servers()) if (status.state === "ready") save(status.name);
  return off;
}
