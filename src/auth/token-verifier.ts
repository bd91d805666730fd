import { decodeJwt, errors, type JWTPayload, jwtVerify } from "jose";
import type { AuthConfig } from "../config/types.js";
import { ProviderUnreachable } from "./fetch-json.js";
import { type IntrospectionClient, introspect } from "./introspection.js";
import { IssuerKeys, KeyNotFound } from "./issuer-keys.js";
import { discoverIssuer, type IssuerMetadata } from "./issuer-metadata.js";

/** Longest token looked at: real access tokens are a few KiB; anything past this is refused unread. */
export const MAX_TOKEN_LENGTH = 8192;

/** A token that may not pass, with why (safe to show the client: it names no key or secret). */
export class TokenRefused extends Error {
  override readonly name = "TokenRefused";
  /** Set when the token could not be checked because the identity provider did not answer. */
  readonly unavailable: boolean;
  /**
   * Set when the issuer itself was asked (introspection) and its answer refused the token: the
   * same token is refused again without asking for a while, so that a client repeating a bad
   * opaque token cannot make the gateway call the issuer once per request.
   */
  readonly answered: boolean;

  constructor(message: string, unavailable = false, answered = false) {
    super(message);
    this.unavailable = unavailable;
    this.answered = answered;
  }
}

/** A token that passed: who it is for, until when. */
export interface VerifiedToken {
  /** The index of the issuer in `auth.issuers`. */
  readonly issuerIndex: number;
  readonly issuer: string;
  readonly claims: Readonly<Record<string, unknown>>;
  /** The `aud` values it names. */
  readonly audience: readonly string[];
  /** When it stops being valid (ms since the epoch). */
  readonly expiresAt: number;
}

/** One configured issuer, with its keys and metadata fetched when first needed. */
interface Issuer {
  readonly index: number;
  readonly issuer: string;
  readonly algorithms: string[];
  readonly keys: IssuerKeys;
  readonly introspection?: IntrospectionClient;
  /** The start of the opaque tokens this issuer introspects, when it is not the default one. */
  readonly prefix?: string;
}

/**
 * Checks access tokens against the configured issuers: a JWT by its signature (the issuer's
 * JWKS), `iss`, `aud`, `exp` and `nbf` (with `auth.clockTolerance`) and an algorithm allow-list;
 * an opaque token by asking the one issuer it belongs to (RFC 7662 introspection; by the prefix
 * `auth.issuers[].introspection.prefix` names, else the issuer without one).
 */
export class TokenVerifier {
  readonly #issuers: Issuer[];
  readonly #toleranceS: number;

  constructor(config: AuthConfig, onEvent: (message: string) => void) {
    this.#toleranceS = Math.round(config.clockTolerance / 1000);
    this.#issuers = config.issuers.map((entry, index) => {
      let metadata: Promise<IssuerMetadata> | undefined;
      const discover = () => {
        // A failed discovery is tried again on the next need (the key set bounds how often).
        metadata ??= discoverIssuer(entry.issuer).catch((error: unknown) => {
          metadata = undefined;
          throw error;
        });
        return metadata;
      };
      const jwksUri = async () => {
        if (entry.jwksUri !== undefined) return entry.jwksUri;
        const found = (await discover()).jwks_uri;
        if (found === undefined)
          throw new ProviderUnreachable(
            `the metadata of ${entry.issuer} names no jwks_uri; set auth.issuers[${index}].jwksUri`,
          );
        return found;
      };
      const keys = new IssuerKeys({
        jwksUri,
        cooldownMs: config.jwksCooldown,
        onFetchFailed: (reason) =>
          onEvent(
            `sign-in: the keys of ${entry.issuer} could not be fetched (${reason}); known keys still verify, tokens signed with others are refused until they can be`,
          ),
      });
      const issuer: Issuer = { index, issuer: entry.issuer, algorithms: entry.algorithms, keys };
      const client = entry.introspection;
      if (client !== undefined) {
        Object.assign(issuer, {
          ...(client.prefix === undefined ? {} : { prefix: client.prefix }),
          introspection: {
            clientId: client.clientId,
            ...(client.clientSecret === undefined ? {} : { clientSecret: client.clientSecret }),
            endpoint: async () => {
              if (client.endpoint !== undefined) return client.endpoint;
              const found = (await discover()).introspection_endpoint;
              if (found === undefined)
                throw new ProviderUnreachable(
                  `the metadata of ${entry.issuer} names no introspection_endpoint; set auth.issuers[${index}].introspection.endpoint`,
                );
              return found;
            },
          },
        });
      }
      return issuer;
    });
  }

  /** How many times each issuer's key set was fetched (tried), in `auth.issuers` order. */
  get keyFetches(): number[] {
    return this.#issuers.map((issuer) => issuer.keys.fetches);
  }

  /**
   * The token's issuer and claims when it passes for one of `audiences`.
   *
   * @throws TokenRefused saying why not.
   */
  async verify(token: string, audiences: readonly string[]): Promise<VerifiedToken> {
    if (token.length > MAX_TOKEN_LENGTH)
      throw new TokenRefused(`the token is longer than ${MAX_TOKEN_LENGTH} characters`);
    let unverified: JWTPayload | undefined;
    try {
      unverified = decodeJwt(token);
    } catch {
      unverified = undefined;
    }
    if (unverified === undefined) {
      // Three dot-separated parts is a JWT's shape: one that does not decode is broken, not opaque.
      if (token.split(".").length === 3)
        throw new TokenRefused("the token is malformed (a JWT that does not decode)");
      return this.#introspect(token, audiences);
    }
    const issuer = this.#issuers.find((candidate) => candidate.issuer === unverified.iss);
    if (issuer === undefined) throw new TokenRefused("the token's issuer is not one this gateway accepts");
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.keys.resolve, {
        issuer: issuer.issuer,
        audience: [...audiences],
        algorithms: issuer.algorithms,
        clockTolerance: this.#toleranceS,
        requiredClaims: ["exp", "sub"],
      }));
    } catch (error) {
      throw refusalOf(error);
    }
    return {
      issuerIndex: issuer.index,
      issuer: issuer.issuer,
      claims: payload,
      audience: audienceOf(payload.aud),
      expiresAt: (payload.exp as number) * 1000,
    };
  }

  async #introspect(token: string, audiences: readonly string[]): Promise<VerifiedToken> {
    // Shown to one issuer only: the one whose prefix the token starts with, else the one without.
    const issuer =
      this.#issuers.find(
        (candidate) => candidate.prefix !== undefined && token.startsWith(candidate.prefix),
      ) ??
      this.#issuers.find(
        (candidate) => candidate.introspection !== undefined && candidate.prefix === undefined,
      );
    if (issuer?.introspection === undefined)
      throw new TokenRefused(
        this.#issuers.some((candidate) => candidate.introspection !== undefined)
          ? "the token is not a JWT, and no issuer introspects opaque tokens of its kind (prefix)"
          : "the token is not a JWT, and no issuer is configured to introspect opaque tokens",
      );
    const now = Date.now() / 1000;
    let claims: Record<string, unknown> | undefined;
    try {
      claims = await introspect(issuer.introspection, token);
    } catch (error) {
      throw new TokenRefused(`the token could not be checked: ${(error as Error).message}`, true);
    }
    if (claims === undefined)
      throw new TokenRefused(
        "the token is not active (expired, revoked or unknown to the issuer)",
        false,
        true,
      );
    if (claims.iss !== undefined && claims.iss !== issuer.issuer)
      throw new TokenRefused("the token's issuer is not one this gateway accepts", false, true);
    const audience = audienceOf(claims.aud);
    if (!audience.some((aud) => audiences.includes(aud)))
      throw new TokenRefused(
        "the token is not for this resource (its audience names another, or none)",
        false,
        true,
      );
    const exp = typeof claims.exp === "number" ? claims.exp : undefined;
    if (exp !== undefined && exp + this.#toleranceS <= now)
      throw new TokenRefused("the token has expired", false, true);
    if (typeof claims.nbf === "number" && claims.nbf - this.#toleranceS > now)
      throw new TokenRefused("the token is not valid yet", false, true);
    // Without `sub` it is a machine caller's (client credentials), known by its client: never a user.
    if (typeof claims.sub !== "string" && typeof claims.client_id !== "string")
      throw new TokenRefused("the token names no subject (sub) and no client (client_id)", false, true);
    return {
      issuerIndex: issuer.index,
      issuer: issuer.issuer,
      claims,
      audience,
      // Without `exp`, asked again after a minute; with it, at most every five (revocation shows).
      expiresAt: Math.min((exp ?? now + 60) * 1000, Date.now() + 5 * 60_000),
    };
  }
}

/** `aud` as a list (RFC 7519 allows a string or a list). */
function audienceOf(aud: unknown): string[] {
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
}

/** What jose's refusal means, said for the client (no key material, no token text). */
function refusalOf(error: unknown): TokenRefused {
  if (error instanceof TokenRefused) return error;
  if (error instanceof KeyNotFound) return new TokenRefused(error.message, error.unavailable);
  if (error instanceof errors.JWTExpired) return new TokenRefused("the token has expired");
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case "aud":
        return new TokenRefused("the token is not for this resource (its audience names another)");
      case "iss":
        return new TokenRefused("the token's issuer is not one this gateway accepts");
      case "nbf":
        return new TokenRefused("the token is not valid yet");
      default:
        return new TokenRefused(`the token's ${error.claim} claim is missing or invalid`);
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return new TokenRefused("the token's signature algorithm is not accepted");
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys)
    return new TokenRefused("no key of the issuer matches the token's header");
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return new TokenRefused("the token's signature does not verify");
  return new TokenRefused("the token is malformed");
}
