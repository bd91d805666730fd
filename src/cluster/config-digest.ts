import type { McplexConfig } from "../config/types.js";
import { mac } from "./signed-ids.js";

/**
 * A digest of what a replica serves (servers, profiles, tokens, `serve:`), keyed with the
 * cluster secret so the digest in Redis tells nothing about the config or its secrets. Where
 * the file is and this replica's own `cluster:` address do not count.
 */
export function configDigest(config: McplexConfig, key: Buffer): string {
  const served = {
    servers: config.servers,
    profiles: config.profiles,
    tokens: config.tokens,
    serve: config.serve ?? {},
  };
  return mac(key, canonicalJson(served), 12).toString("hex");
}

/** JSON with every object's keys sorted, so equal configs give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  });
}
