import type { IncomingMessage } from "node:http";
import { mac, macMatches } from "./signed-ids.js";

/** The header a replica's forwarded request carries. */
export const REPLICA_HEADER = "x-mcplex-replica";
/** A credential older (or newer) than this is refused: a captured one is soon worthless. */
const MAX_SKEW_MS = 60_000;

/**
 * The credential of a request one replica forwards to another: `<from>.<ms>.<mac>`, an HMAC
 * (key derived from the cluster secret) over the sender, the time, the method and the path.
 */
export function replicaCredential(
  key: Buffer,
  from: string,
  method: string,
  path: string,
  now = Date.now(),
): string {
  const body = `${from}.${now}`;
  return `${body}.${mac(key, `${body}.${method}.${path}`).toString("base64url")}`;
}

/**
 * Checks the credential of `req`: `false` when it carries none, `"forged"` when it is not
 * valid (wrong key, altered, or out of date), else `true`.
 */
export function checkReplicaCredential(
  key: Buffer,
  req: IncomingMessage,
  now = Date.now(),
): boolean | "forged" {
  const value = req.headers[REPLICA_HEADER];
  if (value === undefined) return false;
  if (typeof value !== "string") return "forged";
  const parts = value.split(".");
  if (parts.length !== 3) return "forged";
  const [from, at, given] = parts as [string, string, string];
  const time = Number(at);
  if (!Number.isSafeInteger(time) || Math.abs(now - time) > MAX_SKEW_MS) return "forged";
  return macMatches(key, `${from}.${at}.${req.method}.${req.url}`, given) ? true : "forged";
}
