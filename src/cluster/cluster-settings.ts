import type { ClusterConfig } from "../config/types.js";
import { ConfigError } from "../errors.js";

/** What a replica needs to join its cluster, checked. */
export interface ClusterSettings {
  url: string;
  secret: string;
  id?: string;
  advertise?: string;
}

/** The variable the cluster secret is read from when `cluster.secret` is not set. */
export const CLUSTER_SECRET_VARIABLE = "MCPLEX_CLUSTER_SECRET";

/**
 * The `cluster:` block made whole: the secret from `MCPLEX_CLUSTER_SECRET` when the file gives
 * none (`--cluster redis://...` alone). Throws a ConfigError at the path that is missing.
 */
export function clusterSettings(
  cluster: ClusterConfig,
  source: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ClusterSettings {
  if (cluster.url === undefined)
    throw new ConfigError(`${source}: cluster.url is required: the Redis URL the replicas share`, {
      path: "cluster.url",
      hint: "add `cluster: {url: redis://redis:6379}` or pass --cluster redis://redis:6379",
    });
  const secret = cluster.secret ?? (env[CLUSTER_SECRET_VARIABLE] || undefined);
  if (secret === undefined || secret.length < 32)
    throw new ConfigError(
      `${source}: cluster.secret is ${secret === undefined ? "required" : "too short"}: every replica signs session ids and authenticates to the others with the same secret of at least 32 characters`,
      {
        path: "cluster.secret",
        hint: `generate one with \`openssl rand -base64 32\`; set it as cluster.secret (\${secret:CLUSTER_SECRET}) or in ${CLUSTER_SECRET_VARIABLE}`,
      },
    );
  return {
    url: cluster.url,
    secret,
    ...(cluster.id === undefined ? {} : { id: cluster.id }),
    ...(cluster.advertise === undefined ? {} : { advertise: cluster.advertise }),
  };
}

/**
 * This replica's address for the others: `advertise` when given, else the origin it is bound
 * to, which is only reachable from elsewhere when it is not a wildcard.
 */
export function advertisedOrigin(settings: ClusterSettings, boundUrl: string): string {
  if (settings.advertise !== undefined) return settings.advertise;
  const origin = new URL(boundUrl).origin;
  const host = new URL(boundUrl).hostname;
  if (host === "0.0.0.0" || host === "[::]" || host === "::")
    throw new ConfigError(
      `cluster.advertise is required: this replica listens on ${host}, which the others cannot reach`,
      {
        path: "cluster.advertise",
        hint: 'set cluster.advertise to the address the other replicas reach this one at, e.g. "http://10.0.0.5:8420"',
      },
    );
  return origin;
}
