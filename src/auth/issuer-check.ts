import type { AuthIssuerConfig } from "../config/types.js";
import { fetchJson } from "./fetch-json.js";
import { discoverIssuer } from "./issuer-metadata.js";

/** What `mcplex doctor` found out about one issuer of `auth.issuers`. */
export interface IssuerReport {
  readonly ok: boolean;
  readonly message: string;
  readonly hint?: string;
}

/**
 * Asks an issuer what the gateway will ask it while serving: its metadata (unless `jwksUri` is
 * given), its key set, and whether any key can sign with an accepted algorithm; the
 * introspection endpoint when opaque tokens are configured.
 */
export async function checkIssuer(entry: AuthIssuerConfig): Promise<IssuerReport> {
  let jwksUri = entry.jwksUri;
  let introspection = entry.introspection?.endpoint;
  try {
    if (jwksUri === undefined || (entry.introspection !== undefined && introspection === undefined)) {
      const metadata = await discoverIssuer(entry.issuer);
      jwksUri ??= metadata.jwks_uri;
      introspection ??= metadata.introspection_endpoint;
    }
  } catch (error) {
    return {
      ok: false,
      message: (error as Error).message,
      hint: "check the issuer URL (it must equal the tokens' `iss`), or give `jwksUri`",
    };
  }
  if (jwksUri === undefined)
    return { ok: false, message: `${entry.issuer} names no jwks_uri in its metadata`, hint: "set `jwksUri`" };
  if (entry.introspection !== undefined && introspection === undefined)
    return {
      ok: false,
      message: `${entry.issuer} names no introspection_endpoint in its metadata`,
      hint: "set `introspection.endpoint`",
    };
  let keys: unknown[];
  try {
    const set = await fetchJson(jwksUri);
    keys = Array.isArray(set.keys) ? set.keys : [];
  } catch (error) {
    return {
      ok: false,
      message: (error as Error).message,
      hint: "the gateway cannot verify tokens without these keys",
    };
  }
  const usable = keys.filter((key) => {
    const { alg, use, kty } = key as { alg?: unknown; use?: unknown; kty?: unknown };
    if (use === "enc" || kty === "oct") return false;
    return typeof alg !== "string" || entry.algorithms.includes(alg);
  });
  if (usable.length === 0)
    return {
      ok: false,
      message: `${entry.issuer} publishes ${keys.length} key(s) at ${jwksUri}, none for an accepted algorithm (${entry.algorithms.join(", ")})`,
      hint: "widen `algorithms`, or check the issuer's signing keys",
    };
  const algs = [
    ...new Set(usable.map((key) => (key as { alg?: string }).alg ?? (key as { kty: string }).kty)),
  ];
  return {
    ok: true,
    message: `${entry.issuer}: ${usable.length} signing key(s) (${algs.join(", ")})${entry.introspection === undefined ? "" : `, introspection at ${introspection}`}`,
  };
}
