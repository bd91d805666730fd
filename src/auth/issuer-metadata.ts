import { fetchJson, ProviderUnreachable } from "./fetch-json.js";

/** What mcplex reads of an authorization server's metadata (RFC 8414 / OpenID discovery). */
export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwks_uri?: string;
  readonly introspection_endpoint?: string;
}

/**
 * Where an issuer's metadata may be, in the order tried: RFC 8414 (with the issuer's path
 * inserted after `/.well-known/...`), then OpenID Connect discovery both ways (appended, as
 * OpenID says, and inserted, as some providers serve it).
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === "/" ? "" : url.pathname.replace(/\/+$/, "");
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
  if (path !== "") urls.push(`${url.origin}/.well-known/openid-configuration${path}`);
  return urls;
}

/**
 * Reads `issuer`'s metadata, the first of {@link metadataUrls} that answers; its `issuer`
 * must be `issuer` exactly (RFC 8414 §3.3), or the document is someone else's.
 *
 * @throws ProviderUnreachable naming every URL tried and why each failed.
 */
export async function discoverIssuer(issuer: string): Promise<IssuerMetadata> {
  const failures: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let document: Record<string, unknown>;
    try {
      document = await fetchJson(url);
    } catch (error) {
      failures.push((error as Error).message);
      continue;
    }
    if (document.issuer !== issuer) {
      failures.push(
        `${url}: names the issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`,
      );
      continue;
    }
    return {
      issuer,
      ...(typeof document.jwks_uri === "string" ? { jwks_uri: document.jwks_uri } : {}),
      ...(typeof document.introspection_endpoint === "string"
        ? { introspection_endpoint: document.introspection_endpoint }
        : {}),
    };
  }
  throw new ProviderUnreachable(`no metadata for the issuer ${issuer}: ${failures.join("; ")}`);
}
