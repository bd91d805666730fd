import type { McplexConfig } from "../config/types.js";
import { Cluster, type ClusterEvent } from "./cluster.js";
import { advertisedOrigin, clusterSettings } from "./cluster-settings.js";

/**
 * The cluster of a config's `cluster:` block, made before the gateway (which signs with its
 * keys), and the step that joins it once the HTTP front is bound (`join(front.url)`: the
 * bound address is the default `advertise`). Throws a ConfigError when the block is incomplete,
 * or when `host` (the address the front will bind) is a wildcard and no `advertise` is given.
 */
export function prepareCluster(
  config: McplexConfig,
  onEvent: (event: ClusterEvent) => void,
  host?: string,
): { cluster: Cluster; join: (boundUrl: string) => Promise<void> } {
  const settings = clusterSettings(config.cluster ?? {}, config.source);
  // Known before anything listens: a wildcard bind leaves the others no address to use.
  if (host !== undefined) advertisedOrigin(settings, `http://${host.includes(":") ? `[${host}]` : host}:1`);
  const cluster = new Cluster({
    url: settings.url,
    secret: settings.secret,
    ...(settings.id === undefined ? {} : { id: settings.id }),
    onEvent,
  });
  return { cluster, join: (boundUrl) => cluster.start(advertisedOrigin(settings, boundUrl), config) };
}
