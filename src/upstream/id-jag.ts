import { createHash } from "node:crypto";
import {
  type DpopSession,
  discoverAndRequestJwtAuthGrant,
  type FetchLike,
  type OAuthTokens,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import { decodeJwt } from "jose";
import type { IdJagConfig } from "../config/types.js";
import { McplexError } from "../errors.js";
import { type AssertionTarget, discoverAssertionTarget, requestJwtBearerTokens } from "./assertion-grant.js";
import { redactTokens } from "./token-source.js";

/** An ID-JAG is dropped this long before it expires, so that none is presented on its last second. */
const EXPIRY_MARGIN_MS = 30_000;
/** How long an ID-JAG that says nothing of its expiry is kept. */
const DEFAULT_LIFETIME_MS = 60_000;

/**
 * ID-JAGs by (user, server, audience), each until it expires: a new access token for the same
 * user and server reuses the grant instead of asking the identity provider again. In memory
 * only; an ID-JAG is a credential.
 */
export class IdJagCache {
  readonly #grants = new Map<string, { grant: string; expiresAt: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  get(user: string, server: string, audience: string): string | undefined {
    const key = cacheKey(user, server, audience);
    const entry = this.#grants.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt - EXPIRY_MARGIN_MS > this.#now()) return entry.grant;
    this.#grants.delete(key);
    return undefined;
  }

  set(user: string, server: string, audience: string, grant: string, expiresInSeconds?: number): void {
    const expiresAt =
      expiresInSeconds !== undefined
        ? this.#now() + expiresInSeconds * 1000
        : (jwtExpiry(grant) ?? this.#now() + DEFAULT_LIFETIME_MS);
    this.#grants.set(cacheKey(user, server, audience), { grant, expiresAt });
  }

  /** Forgets a grant the authorization server refused. */
  delete(user: string, server: string, audience: string): void {
    this.#grants.delete(cacheKey(user, server, audience));
  }
}

/** The cache {@link idJagTokens} uses when given none: this process's. */
const processCache = new IdJagCache();

/** What {@link idJagTokens} needs besides the user's ID token. */
export interface IdJagTokensOptions {
  server: string;
  serverUrl: URL;
  /** The user's ID token from the identity provider: the `subject_token` of the exchange. */
  subjectToken: string;
  /** The identity provider, and mcplex's client there. */
  idJag: Omit<IdJagConfig, "idToken">;
  /** mcplex's client at the MCP server's authorization server (client_secret_basic there). */
  client: { clientId: string; clientSecret?: string };
  /** Who the grant is for, for the cache; default the ID token's issuer and subject. */
  user?: string;
  cache?: IdJagCache;
  /** Scope a challenge asked for; without it, the server's `scopes_supported`, else `configuredScope`. */
  scope?: string;
  configuredScope?: string;
  resourceMetadataUrl?: URL;
  dpop?: DpopSession;
  fetchFn?: FetchLike;
}

/**
 * Enterprise-managed authorization (SEP-990) for one server: the user's ID token is exchanged
 * at the identity provider for an ID-JAG (RFC 8693, audience the server's authorization server,
 * resource the server), which the authorization server takes for an access token (RFC 7523
 * JWT-bearer grant). The ID-JAG is cached per (user, server, audience) until it expires. A
 * refusal fails with `OAUTH_GRANT_REFUSED` saying which step refused: the identity provider's
 * exchange or the authorization server's grant.
 *
 * @example
 * const tokens = await idJagTokens({
 *   server: "crm", serverUrl: new URL("https://crm.example.com/mcp"), subjectToken: idToken,
 *   idJag: { issuer: "https://idp.example.com", clientId: "mcplex" },
 *   client: { clientId: "mcplex-crm", clientSecret },
 * });
 */
export async function idJagTokens(options: IdJagTokensOptions): Promise<OAuthTokens & { issuer: string }> {
  const { server, serverUrl, subjectToken, client, fetchFn, dpop } = options;
  const cache = options.cache ?? processCache;
  const target = await discoverAssertionTarget(server, serverUrl, {
    ...(fetchFn === undefined ? {} : { fetchFn }),
    ...(options.resourceMetadataUrl === undefined
      ? {}
      : { resourceMetadataUrl: options.resourceMetadataUrl }),
    ...(options.scope === undefined ? {} : { scope: options.scope }),
    ...(options.configuredScope === undefined ? {} : { configuredScope: options.configuredScope }),
  });
  const user = options.user ?? subjectOf(subjectToken);
  let grant = cache.get(user, server, target.issuer);
  if (grant === undefined) {
    const issued = await requestIdJag(target, options);
    grant = issued.jwtAuthGrant;
    cache.set(user, server, target.issuer, grant, issued.expiresIn);
  }
  try {
    const tokens = await requestJwtBearerTokens(target, {
      server,
      assertion: grant,
      client: {
        client_id: client.clientId,
        ...(client.clientSecret === undefined ? {} : { client_secret: client.clientSecret }),
      },
      ...(dpop === undefined ? {} : { dpop }),
      ...(fetchFn === undefined ? {} : { fetchFn }),
      what: "the ID-JAG from the identity provider",
      invalidGrantHint:
        "the authorization server does not accept grants of this identity provider for this client, or the grant expired: check that it trusts the provider and that idJag.clientId is linked to oauth.clientId",
    });
    return { ...tokens, issuer: target.issuer };
  } catch (error) {
    // A refused grant is not presented again: the next attempt asks the identity provider anew.
    cache.delete(user, server, target.issuer);
    throw error;
  }
}

/** Step one: the RFC 8693 exchange at the identity provider (its token endpoint, or discovered from its issuer). */
async function requestIdJag(target: AssertionTarget, options: IdJagTokensOptions) {
  const { server, subjectToken, idJag, fetchFn } = options;
  const common = {
    audience: target.issuer,
    resource: target.resource,
    idToken: subjectToken,
    clientId: idJag.clientId,
    ...(idJag.clientSecret === undefined ? {} : { clientSecret: idJag.clientSecret }),
    ...(target.scope === undefined ? {} : { scope: target.scope }),
    ...(fetchFn === undefined ? {} : { fetchFn }),
  };
  const provider = idJag.tokenEndpoint ?? idJag.issuer ?? "";
  try {
    return idJag.tokenEndpoint !== undefined
      ? await requestJwtAuthorizationGrant({ ...common, tokenEndpoint: idJag.tokenEndpoint })
      : await discoverAndRequestJwtAuthGrant({ ...common, idpUrl: provider });
  } catch (error) {
    const reason = redactTokens(error instanceof Error ? error.message : String(error), subjectToken);
    throw new McplexError(
      "OAUTH_GRANT_REFUSED",
      `${server}: the identity provider ${provider} refused to exchange the user's ID token for an ID-JAG (RFC 8693): ${reason}`,
      {
        server,
        retryable: true,
        hint: `check servers.${server}.oauth.idJag (clientId, clientSecret) and that the ID token is current and issued to that client`,
      },
    );
  }
}

/** The cache's user for an ID token: its issuer and subject (read, not verified: the provider verifies it). */
function subjectOf(idToken: string): string {
  try {
    const { iss, sub } = decodeJwt(idToken);
    if (typeof sub === "string") return `${iss ?? ""}\n${sub}`;
  } catch {
    // Not a JWT: keyed by its digest instead.
  }
  return createHash("sha256").update(idToken).digest("base64url");
}

function jwtExpiry(jwt: string): number | undefined {
  try {
    const { exp } = decodeJwt(jwt);
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

function cacheKey(user: string, server: string, audience: string): string {
  return JSON.stringify([user, server, audience]);
}
