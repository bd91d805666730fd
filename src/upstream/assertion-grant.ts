import {
  type AuthorizationServerMetadata,
  checkResourceAllowed,
  type DpopSession,
  discoverOAuthServerInfo,
  type FetchLike,
  fetchToken,
  type OAuthClientProvider,
  OAuthError,
  type OAuthTokens,
  resourceUrlFromServerUrl,
  type StoredOAuthClientInformation,
} from "@modelcontextprotocol/client";
import { McplexError } from "../errors.js";
import { redactTokens } from "./token-source.js";

/** The grant type of RFC 7523 §2.1: an assertion (a JWT) for an access token. */
export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** Where an assertion grant for a server goes, found by discovery (RFC 9728, RFC 8414). */
export interface AssertionTarget {
  authorizationServerUrl: string;
  metadata: AuthorizationServerMetadata | undefined;
  /** The authorization server's issuer: the audience its assertions must name. */
  issuer: string;
  /** The resource indicator (RFC 8707) of the server. */
  resource: string;
  /** Scope to ask for, if any. */
  scope?: string;
}

/**
 * Finds a server's authorization server and resource: the protected resource metadata (at
 * `resourceMetadataUrl` when a challenge named it), then the authorization server's metadata.
 * The scope asked for is `scope` (a challenge's), else the resource's `scopes_supported`,
 * else `configuredScope`.
 */
export async function discoverAssertionTarget(
  server: string,
  serverUrl: URL,
  options: { fetchFn?: FetchLike; resourceMetadataUrl?: URL; scope?: string; configuredScope?: string } = {},
): Promise<AssertionTarget> {
  const info = await discoverOAuthServerInfo(serverUrl, {
    ...(options.fetchFn === undefined ? {} : { fetchFn: options.fetchFn }),
    ...(options.resourceMetadataUrl === undefined
      ? {}
      : { resourceMetadataUrl: options.resourceMetadataUrl }),
  });
  const metadata = info.authorizationServerMetadata;
  const authorizationServerUrl = String(info.authorizationServerUrl);
  const ownResource = resourceUrlFromServerUrl(serverUrl);
  const advertised = info.resourceMetadata?.resource;
  if (
    advertised !== undefined &&
    !checkResourceAllowed({ requestedResource: ownResource, configuredResource: advertised })
  ) {
    throw new McplexError(
      "UPSTREAM_UNAUTHORIZED",
      `${server}: the server's metadata names the resource ${advertised}, which is not ${ownResource.href}`,
      { server, hint: "check the server's URL in the config; mcplex sends no token for another resource" },
    );
  }
  const scope =
    options.scope ?? info.resourceMetadata?.scopes_supported?.join(" ") ?? options.configuredScope;
  return {
    authorizationServerUrl,
    metadata,
    issuer: metadata?.issuer ?? authorizationServerUrl,
    resource: advertised ?? ownResource.href,
    ...(scope === undefined || scope === "" ? {} : { scope }),
  };
}

/** What {@link requestJwtBearerTokens} presents, and to name in its errors. */
export interface JwtBearerRequest {
  server: string;
  /** The JWT: the workload's own (WIF) or an ID-JAG. */
  assertion: string;
  /** The client at the authorization server, if it has one; authenticated as the metadata allows. */
  client?: StoredOAuthClientInformation;
  dpop?: DpopSession;
  fetchFn?: FetchLike;
  /** Names the assertion in errors: "the workload's JWT", "the ID-JAG". */
  what: string;
  /** The fix to suggest when the assertion itself is refused (`invalid_grant`). */
  invalidGrantHint: string;
}

/**
 * Asks `target`'s authorization server for tokens with the JWT-bearer grant (RFC 7523), once:
 * a refusal is not retried and no other grant is tried. It fails with `OAUTH_GRANT_REFUSED`
 * naming the server, the refusal and its fix; the assertion never appears in it, even when
 * the authorization server echoes it back.
 */
export async function requestJwtBearerTokens(
  target: AssertionTarget,
  request: JwtBearerRequest,
): Promise<OAuthTokens> {
  const { assertion, client, dpop, fetchFn } = request;
  const params = (scope?: string) =>
    new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion, ...(scope ? { scope } : {}) });
  // fetchToken is the SDK's token request (client authentication, DPoP proof and nonce, the
  // checks of the answer) without auth()'s recovery, which retries after invalid_grant.
  const provider: OAuthClientProvider = {
    redirectUrl: undefined,
    clientMetadata: { redirect_uris: [], grant_types: [JWT_BEARER_GRANT] },
    clientInformation: () => client,
    tokens: () => undefined,
    saveTokens: () => {},
    redirectToAuthorization: () => {},
    saveCodeVerifier: () => {},
    codeVerifier: () => "",
    prepareTokenRequest: params,
    ...(dpop === undefined ? {} : { dpop: () => dpop }),
  };
  try {
    return await fetchToken(provider, target.authorizationServerUrl, {
      metadata: target.metadata,
      resource: new URL(target.resource),
      ...(target.scope === undefined ? {} : { scope: target.scope }),
      ...(fetchFn === undefined ? {} : { fetchFn }),
    });
  } catch (error) {
    throw refusal(target, request, error);
  }
}

function refusal(target: AssertionTarget, request: JwtBearerRequest, error: unknown): McplexError {
  const { server, assertion, what } = request;
  const who = `the authorization server ${target.issuer}`;
  if (!(error instanceof OAuthError)) {
    const reason = redactTokens(error instanceof Error ? error.message : String(error), assertion);
    return new McplexError(
      "OAUTH_GRANT_REFUSED",
      `${server}: the token request to ${who} failed: ${reason}`,
      { server, retryable: true, hint: `check that ${who} is reachable` },
      { cause: error },
    );
  }
  const description = redactTokens(error.message, assertion);
  const said = `${error.code}${description === "" || description === error.code ? "" : ` (${description})`}`;
  const hints: Record<string, string> = {
    invalid_grant: request.invalidGrantHint,
    invalid_scope: `the scope asked for (${target.scope ?? "none"}) is not allowed for this client: change servers.${server}.oauth.scope, or what ${who} allows`,
    unauthorized_client: `${who} does not let this client use the JWT-bearer grant: have it registered for the grant there`,
    invalid_client: `${who} does not know this client or its credentials: check servers.${server}.oauth.clientId and clientSecret`,
  };
  // The message of the SDK's error is the server's text; it is data and quoted as such.
  return new McplexError(
    "OAUTH_GRANT_REFUSED",
    `${server}: ${who} refused ${what} (JWT-bearer grant): ${said}`,
    {
      server,
      retryable: error.code === "invalid_grant",
      hint: hints[error.code] ?? `see what ${who} says above; mcplex does not retry a refused grant`,
    },
  );
}
