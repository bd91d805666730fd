import type { Cluster, ClusterEvent } from "../cluster/cluster.js";
import type { McplexConfig } from "../config/types.js";
import type { HubOptions } from "../hub/hub-types.js";

/** One replica of several: its cluster, the step that joins it, and the OAuth tokens it shares. */
export interface BuiltCluster {
  cluster: Cluster;
  /** Joins the cluster once the HTTP front is bound (its URL is the default `advertise`). */
  join: (boundUrl: string) => Promise<void>;
  /** The hub's OAuth options, with a token store every replica shares. */
  oauth: HubOptions["oauth"];
}

/**
 * The cluster of a config's `cluster:` block when it serves HTTP (loaded only then), connecting
 * to Redis; `undefined` otherwise. Made before the hub (whose OAuth tokens the replicas share)
 * and the gateway (which signs with the cluster's keys).
 */
export async function buildCluster(
  config: McplexConfig,
  options: { transport: "stdio" | "http"; host?: string; oauth?: HubOptions["oauth"] },
  onEvent: (event: ClusterEvent) => void,
): Promise<BuiltCluster | undefined> {
  if (config.cluster === undefined || options.transport !== "http") return undefined;
  const { prepareCluster } = await import("../cluster/join-cluster.js");
  // The OAuth code brings the SDK client (and zod) with it: loaded when it is used, as here.
  const { memoryOAuthStore } = await import("../upstream/oauth.js");
  const { cluster, join } = prepareCluster(config, onEvent, options.host ?? "127.0.0.1");
  void cluster.connect();
  const oauth = options.oauth;
  return {
    cluster,
    join,
    oauth: { ...oauth, store: cluster.oauthStore(oauth?.store ?? memoryOAuthStore()) },
  };
}
