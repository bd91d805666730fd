import { urlCredentials } from "./redact.js";
import type { ClusterConfig } from "./types.js";
import type { ValueReader } from "./value-reader.js";

/** Shortest cluster secret accepted: it signs session ids and replica-to-replica requests. */
export const MIN_CLUSTER_SECRET_LENGTH = 32;

/** Replica ids go into session ids and Redis keys: short, and nothing that needs escaping. */
const REPLICA_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The `cluster:` block: Redis, this replica's internal address and the cluster secret. Every
 * problem is recorded at its exact path (`cluster.secret`); the secret and the URL's password
 * are redacted from logs.
 */
export function readCluster(reader: ValueReader, value: unknown): ClusterConfig | undefined {
  const node = reader.map(value, "cluster");
  if (node === undefined) return undefined;
  reader.knownKeys(node, "cluster", ["url", "advertise", "secret", "id"]);
  const cluster: ClusterConfig = {};
  const url = reader.nonEmpty(node.url, "cluster.url");
  if (url !== undefined) {
    for (const credential of urlCredentials(url)) reader.secrets.add(credential);
    const problem = clusterUrlProblem(url);
    if (problem !== undefined) reader.fail("cluster.url", problem);
    else cluster.url = url;
  }
  const advertise = reader.nonEmpty(node.advertise, "cluster.advertise");
  if (advertise !== undefined) {
    const problem = advertiseProblem(advertise);
    if (problem !== undefined) reader.fail("cluster.advertise", problem);
    else cluster.advertise = advertise.replace(/\/+$/, "");
  }
  const secret = reader.nonEmpty(node.secret, "cluster.secret");
  if (secret !== undefined) {
    reader.secrets.add(secret);
    if (secret.length < MIN_CLUSTER_SECRET_LENGTH)
      reader.fail(
        "cluster.secret",
        `must be at least ${MIN_CLUSTER_SECRET_LENGTH} characters (it signs session ids); generate one with \`openssl rand -base64 32\` and write it as \${secret:CLUSTER_SECRET}`,
      );
    else cluster.secret = secret;
  }
  const id = reader.nonEmpty(node.id, "cluster.id");
  if (id !== undefined) {
    if (!REPLICA_ID.test(id))
      reader.fail(
        "cluster.id",
        "must be 1-64 letters, digits, - or _ (it names this replica in session ids)",
      );
    else cluster.id = id;
  }
  return cluster;
}

/** Why `url` cannot be the cluster's Redis URL, or `undefined`. */
export function clusterUrlProblem(url: string): string | undefined {
  if (!/^rediss?:\/\/[^/]/i.test(url) || !URL.canParse(url))
    return 'must be a Redis URL such as "redis://redis:6379" (or rediss:// for TLS)';
  return undefined;
}

/** Why `advertise` cannot be this replica's internal address, or `undefined`. */
export function advertiseProblem(advertise: string): string | undefined {
  if (!/^https?:\/\/[^/]/i.test(advertise) || !URL.canParse(advertise))
    return 'must be the http(s) address other replicas reach this one at, such as "http://10.0.0.5:8420"';
  const { hostname, pathname } = new URL(advertise);
  if (hostname === "0.0.0.0" || hostname === "[::]")
    return `names no reachable host (${hostname}): give the address other replicas reach this one at`;
  if (pathname !== "/" && pathname !== "")
    return "is an origin (scheme, host, port), without a path such as /mcp";
  return undefined;
}
