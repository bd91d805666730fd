import { saveToolList } from "../recording/tool-cache.js";
import { redactValue } from "../upstream/error-redaction.js";
import type { Hub } from "./hub.js";

/**
 * Keeps the tool list of every server that runs for real in `cacheDir` (see `saveToolList`),
 * each time it becomes ready or lists anew, so that `mcplex serve --simulate` can stand in for
 * it later. Returns the detach function. A cache that cannot be written is skipped silently:
 * it is a convenience, and serving must not fail for it.
 */
export function cacheToolLists(hub: Hub, cacheDir: string): () => void {
  const saved = new Map<string, string>();
  const save = (server: string) => {
    const status = hub.servers().find((s) => s.name === server);
    const details = hub.serverDetails(server);
    if (status === undefined || status.simulated !== undefined || details === undefined) return;
    const text = JSON.stringify(details.tools);
    if (saved.get(server) === text) return;
    saved.set(server, text);
    try {
      saveToolList(cacheDir, {
        server,
        savedAt: new Date().toISOString(),
        // A description may quote what the server was given: the cache is redacted like a recording.
        tools: redactValue(details.tools, (text) => hub.redact(text)) as unknown as Record<string, unknown>[],
        ...(details.serverInfo === undefined
          ? {}
          : { serverInfo: { name: details.serverInfo.name, version: details.serverInfo.version } }),
      });
    } catch {
      // See above: the cache is best effort.
    }
  };
  const off = hub.on((event) => {
    if (event.type === "server-state" && event.state === "ready") save(event.server);
    else if (event.type === "catalog-changed") for (const server of event.servers) save(server);
  });
  for (const status of hub.servers()) if (status.state === "ready") save(status.name);
  return off;
}
