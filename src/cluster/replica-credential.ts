import type { IncomingMessage } from "node:http";
import { mac, macMatches } from "./signed-ids.js";

/** The header a replica's forwarded request carries. */
export const REPLICA_HEADER = "x-mcplex-replica";
/** A credential older (or newer) than this is refused: a captured one is soon worthless. */
const MAX_SKEW_MS = 60_000;
/** How long a minted credential is sent again for the same method and path. */
const REUSE_MS = 5_000;
/** Credentials remembered as checked, per replica. */
const CHECKED = 1_000;

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

/** The time `value` was minted at, when it is a valid credential for `method` and `path` now. */
function credentialTime(
  key: Buffer,
  value: string,
  method: string | undefined,
  path: string | undefined,
  now: number,
): number | undefined {
  const parts = value.split(".");
  if (parts.length !== 3) return undefined;
  const [from, at, given] = parts as [string, string, string];
  const time = Number(at);
  if (!Number.isSafeInteger(time) || Math.abs(now - time) > MAX_SKEW_MS) return undefined;
  return macMatches(key, `${from}.${at}.${method}.${path}`, given) ? time : undefined;
}

/**
 * The credentials of one replica, minted and checked without an HMAC per request: a minted
 * credential is sent again for {@link REUSE_MS} (it is valid for a minute either way), and one
 * checked is remembered until it is out of date. Neither changes what is accepted: a
 * credential proves a replica sent the request, not which request, so any valid one could
 * already be sent again within its minute.
 */
export class ReplicaCredentials {
  readonly #key: Buffer;
  readonly #from: string;
  readonly #minted = new Map<string, { value: string; at: number }>();
  /** Checked credentials (with method and path) and the time each was minted. */
  readonly #checked = new Map<string, number>();

  constructor(key: Buffer, from: string) {
    this.#key = key;
    this.#from = from;
  }

  mint(method: string, path: string, now = Date.now()): string {
    const key = `${method} ${path}`;
    const last = this.#minted.get(key);
    if (last !== undefined && now - last.at < REUSE_MS && now >= last.at) return last.value;
    const value = replicaCredential(this.#key, this.#from, method, path, now);
    if (this.#minted.size >= CHECKED) this.#minted.clear();
    this.#minted.set(key, { value, at: now });
    return value;
  }

  /**
   * Checks the credential of `req`: `false` when it carries none, `"forged"` when it is not
   * valid (wrong key, altered, or out of date), else `true`.
   */
  check(req: IncomingMessage, now = Date.now()): boolean | "forged" {
    const value = req.headers[REPLICA_HEADER];
    if (value === undefined) return false;
    if (typeof value !== "string") return "forged";
    const key = `${req.method} ${req.url} ${value}`;
    const at = this.#checked.get(key);
    if (at !== undefined) {
      if (Math.abs(now - at) <= MAX_SKEW_MS) return true;
      this.#checked.delete(key);
      return "forged";
    }
    const time = credentialTime(this.#key, value, req.method, req.url, now);
    if (time === undefined) return "forged";
    if (this.#checked.size >= CHECKED) this.#checked.delete(this.#checked.keys().next().value!);
    this.#checked.set(key, time);
    return true;
  }
}
