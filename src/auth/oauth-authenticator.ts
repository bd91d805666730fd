import { hash } from "node:crypto";
import { accessRules } from "../access/access-rules.js";
import type { AuthConfig, TokenConfig } from "../config/types.js";
import {
  type Authenticator,
  type AuthOutcome,
  type AuthRequest,
  authenticate as checkStaticToken,
  parseBearer,
  parseDpopAuthorization,
  StaticTokenAuthenticator,
} from "../fronts/authenticator.js";
import { type DpopProofs, type DpopSharing, dpopProofsFor, ProofRefused } from "./dpop-proof.js";
import { ENDPOINTS, ResourceUrls } from "./resource-urls.js";
import { outcomeOf } from "./signed-in-outcome.js";
import { TokenRefused, TokenVerifier, type VerifiedToken } from "./token-verifier.js";

export type { DpopSharing } from "./dpop-proof.js";

/** Verified tokens kept at most; past it the oldest go first. */
const MAX_CACHED = 10_000;
/** How long a token the issuer refused when asked is refused again without asking. */
const REFUSED_FOR_MS = 30_000;
/** The same failure of the identity provider is logged at most this often. */
const LOG_EVERY_MS = 30_000;

/** A verified token's outcome, kept until the token expires. */
interface Cached {
  readonly token: VerifiedToken;
  readonly outcome: AuthOutcome;
  /** The thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449 §6), if it is. */
  readonly jkt?: string;
}

/**
 * The gateway as an OAuth 2.1 resource server (the `auth:` block): access tokens of the
 * configured issuers are verified (see {@link TokenVerifier}) and their claims mapped to a profile
 * by `auth.access`; the static `tokens:` keep working beside them. A verified token is kept by its
 * SHA-256 until it expires, so a call pays its check once. It publishes the protected-resource
 * metadata (RFC 9728) and answers a missing or bad token with a challenge that points to it.
 */
export class OAuthAuthenticator implements Authenticator {
  readonly required = true;
  readonly statics: StaticTokenAuthenticator;
  readonly #config: AuthConfig;
  readonly #verifier: TokenVerifier;
  readonly #dpop: DpopProofs;
  readonly #ruleFor: ReturnType<typeof accessRules>;
  readonly #cache = new Map<string, Cached>();
  readonly #pending = new Map<string, Promise<Cached>>();
  /** Tokens the issuer refused when asked (introspection), by hash: not asked again for a while. */
  readonly #refused = new Map<string, { until: number; message: string }>();
  readonly #scopesSupported: string[];
  readonly #log: (message: string) => void;
  readonly #logged = new Map<string, number>();
  /** The URLs the gateway is reached at, and the audiences a token may name. */
  readonly #urls: ResourceUrls;

  constructor(
    config: AuthConfig,
    options: {
      tokens?: readonly TokenConfig[];
      onEvent?: (message: string) => void;
      dpop?: DpopSharing;
    } = {},
  ) {
    this.#config = config;
    this.statics = new StaticTokenAuthenticator(options.tokens ?? []);
    const onEvent = options.onEvent ?? (() => {});
    this.#log = (message) => {
      const now = Date.now();
      if (now - (this.#logged.get(message) ?? Number.NEGATIVE_INFINITY) < LOG_EVERY_MS) return;
      this.#logged.set(message, now);
      onEvent(message);
    };
    this.#verifier = new TokenVerifier(config, this.#log);
    this.#dpop = dpopProofsFor(config, options.dpop);
    this.#urls = new ResourceUrls(config);
    this.#ruleFor = accessRules(config.access);
    this.#scopesSupported = [
      ...new Set([...config.scopes, ...config.require.flatMap((rule) => rule.scopes)]),
    ];
  }

  /** How many times each issuer's key set was fetched (tried), in `auth.issuers` order. */
  get keyFetches(): number[] {
    return this.#verifier.keyFetches;
  }

  /**
   * Where the HTTP front listens (`http://127.0.0.1:8420`, `http://localhost:8420`): without
   * `auth.resource`, these are the resource's URLs, the audiences accepted. Until it is called
   * (and with neither), no token's audience is accepted.
   */
  bound(origins: readonly string[]): void {
    // Verified for other audiences: checked again.
    if (this.#urls.bound(origins)) this.#cache.clear();
  }

  /** Tokens kept as verified now (a refused token is never kept), for tests and metrics. */
  get cachedTokens(): number {
    return this.#cache.size;
  }

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    const header = headerOf(request, "authorization");
    const bearer = parseBearer(header);
    const dpop = bearer.kind === "none" ? parseDpopAuthorization(header) : undefined;
    if (dpop !== undefined && dpop.kind !== "none") return this.#authenticateDpop(request, dpop);
    if (bearer.kind === "none")
      return this.#unauthorized(
        request,
        this.#dpop.required
          ? "Unauthorized: sign in, and send the DPoP-bound access token as `Authorization: DPoP <token>` with a DPoP proof"
          : "Unauthorized: sign in, and send the access token as `Authorization: Bearer <token>`",
      );
    if (request.repeatedAuthorization === true)
      return this.#unauthorized(
        request,
        "Unauthorized: several Authorization headers; send one",
        "invalid_request",
      );
    if (bearer.kind === "malformed")
      return this.#unauthorized(
        request,
        `Unauthorized: malformed Authorization header (${bearer.problem})`,
        "invalid_request",
      );
    const token = bearer.token;
    if (this.statics.required) {
      const outcome = this.statics.authenticateNow(request);
      if (outcome.ok) return outcome;
    }
    const checked = await this.#verified(request, token);
    if (!("token" in checked)) return checked;
    // A bound token as a bearer: whoever holds it would not need the key (RFC 9449 §7.1).
    if (checked.jkt !== undefined)
      return this.#dpopRefusal(
        request,
        "Unauthorized: this token is DPoP-bound; send it as `Authorization: DPoP <token>` with a DPoP proof",
        "invalid_token",
      );
    if (this.#dpop.required)
      return this.#dpopRefusal(
        request,
        "Unauthorized: this gateway accepts DPoP-bound tokens only; sign in with DPoP (the token has no cnf.jkt)",
        "invalid_token",
      );
    return checked.outcome;
  }

  /**
   * `Authorization: DPoP <token>` (RFC 9449 §7.1): one `DPoP` header, the token verified and
   * bound (`cnf.jkt`), then its proof checked for this request. A proof another replica checked
   * (a forwarded request, its replica credential verified) is not checked again: its `jti` is
   * spent already.
   */
  async #authenticateDpop(
    request: AuthRequest,
    dpop: Exclude<ReturnType<typeof parseDpopAuthorization>, { kind: "none" }>,
  ): Promise<AuthOutcome> {
    if (request.repeatedAuthorization === true)
      return this.#dpopRefusal(
        request,
        "Unauthorized: several Authorization headers; send one",
        "invalid_request",
      );
    if (dpop.kind === "malformed")
      return this.#dpopRefusal(
        request,
        `Unauthorized: malformed Authorization header (${dpop.problem})`,
        "invalid_request",
      );
    const proof = headerOf(request, "dpop");
    if (proof === undefined || request.dpopHeaders === 0)
      return this.#dpopRefusal(
        request,
        "Unauthorized: no DPoP proof; send one DPoP header",
        "invalid_dpop_proof",
      );
    if ((request.dpopHeaders ?? 1) > 1)
      return this.#dpopRefusal(
        request,
        "Unauthorized: several DPoP headers; send exactly one proof",
        "invalid_dpop_proof",
      );
    const token = dpop.token;
    // A static token is no issuer's: never shown to one (introspection), whatever scheme it came under.
    if (this.statics.required && checkStaticToken(`Bearer ${token}`, this.statics.tokens).ok)
      return this.#dpopRefusal(
        request,
        "Unauthorized: a static token is a bearer token; send it as `Authorization: Bearer <token>`",
        "invalid_token",
      );
    const checked = await this.#verified(request, token, "dpop");
    if (!("token" in checked)) return checked;
    if (checked.jkt === undefined)
      return this.#dpopRefusal(
        request,
        "Unauthorized: this token is not DPoP-bound (no cnf.jkt); send it as `Authorization: Bearer <token>`",
        "invalid_token",
      );
    if (request.fromReplica !== true) {
      try {
        await this.#dpop.check({
          proof,
          method: request.method ?? "GET",
          url: `${this.#urls.base(request)}${request.path ?? "/"}`,
          accessToken: token,
          jkt: checked.jkt,
        });
      } catch (error) {
        if (!(error instanceof ProofRefused)) throw error;
        return this.#dpopRefusal(request, `Unauthorized: ${error.message}`, error.error);
      }
    }
    const outcome = checked.outcome;
    // A 403 (insufficient scope) names the scheme the token came under (RFC 9449 §7.1).
    if (!outcome.ok)
      return outcome.wwwAuthenticate?.startsWith("Bearer ") === true
        ? { ...outcome, wwwAuthenticate: `DPoP ${outcome.wwwAuthenticate.slice(7)}` }
        : outcome;
    if (!this.#dpop.usesNonce) return outcome;
    return { ...outcome, headers: { "dpop-nonce": this.#dpop.nonce() } };
  }

  /**
   * The token verified (from the cache, or checked now) with its outcome, or the 401 refusing
   * it. `scheme` names the challenge of a refusal.
   */
  async #verified(
    request: AuthRequest,
    token: string,
    scheme: "bearer" | "dpop" = "bearer",
  ): Promise<Cached | AuthOutcome> {
    const refuse = (message: string) =>
      scheme === "dpop"
        ? this.#dpopRefusal(request, message, "invalid_token")
        : this.#unauthorized(request, message, "invalid_token");
    // One-shot hash(): a fifth of createHash()'s cost per call (a cached check is on every request).
    const key = hash("sha256", token, "base64url");
    const now = Date.now();
    let cached = this.#cache.get(key);
    if (cached !== undefined && cached.token.expiresAt <= now) {
      this.#cache.delete(key);
      cached = undefined;
    }
    if (cached === undefined) {
      const refused = this.#refused.get(key);
      if (refused !== undefined && refused.until > now) return refuse(`Unauthorized: ${refused.message}`);
      let pending = this.#pending.get(key);
      if (pending === undefined) {
        // One check per token at a time, however many requests carry it at once.
        pending = this.#check(token);
        this.#pending.set(key, pending);
        void pending.then(
          () => this.#pending.delete(key),
          () => this.#pending.delete(key),
        );
      }
      try {
        cached = await pending;
      } catch (error) {
        if (!(error instanceof TokenRefused)) throw error;
        if (error.unavailable) this.#log(`sign-in: a token could not be checked: ${error.message}`);
        if (error.answered) {
          if (this.#refused.size >= MAX_CACHED) this.#refused.delete(this.#refused.keys().next().value!);
          this.#refused.set(key, { until: now + REFUSED_FOR_MS, message: error.message });
        }
        return refuse(`Unauthorized: ${error.message}`);
      }
      if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(key, cached);
    }
    return cached;
  }

  async #check(token: string): Promise<Cached> {
    const verified = await this.#verifier.verify(token, [...this.#urls.audiences]);
    const outcome = outcomeOf(verified, token, this.#config, this.#ruleFor);
    const jkt = (verified.claims.cnf as { jkt?: unknown } | undefined)?.jkt;
    if (typeof jkt === "string" && jkt !== "") return { token: verified, outcome, jkt };
    // A `cnf` naming a key some other way (x5t#S256, a certificate) binds the token to what this
    // gateway cannot check: refused rather than taken as a bearer.
    if (verified.claims.cnf !== undefined)
      throw new TokenRefused("the token is bound to a key by a method this gateway does not check (cnf)");
    return { token: verified, outcome };
  }

  /** RFC 9728 metadata for `/.well-known/oauth-protected-resource` and its per-endpoint forms. */
  wellKnown(name: string, suffix: string, request: AuthRequest): Record<string, unknown> | undefined {
    if (name !== "oauth-protected-resource") return undefined;
    if (suffix !== "" && !(ENDPOINTS as readonly string[]).includes(suffix)) return undefined;
    return {
      resource: `${this.#urls.base(request)}${suffix}`,
      authorization_servers: this.#config.issuers.map((issuer) => issuer.issuer),
      ...(this.#scopesSupported.length === 0 ? {} : { scopes_supported: this.#scopesSupported }),
      bearer_methods_supported: ["header"],
      resource_name: "mcplex",
      dpop_signing_alg_values_supported: [...this.#dpop.algorithms],
      ...(this.#dpop.required ? { dpop_bound_access_tokens_required: true } : {}),
    };
  }

  insufficientScope(request: AuthRequest, scope: string): string {
    // In the scheme the token came under: a DPoP-bound token steps up as DPoP (RFC 9449 §7.1).
    const scheme =
      parseDpopAuthorization(headerOf(request, "authorization")).kind === "token" ? "DPoP" : "Bearer";
    return `${scheme} error="insufficient_scope", scope="${scope}", resource_metadata="${this.#urls.metadataUrl(request)}"`;
  }

  #unauthorized(
    request: AuthRequest,
    message: string,
    error?: "invalid_token" | "invalid_request",
  ): AuthOutcome {
    const scope = this.#config.scopes.length === 0 ? "" : `, scope="${this.#config.scopes.join(" ")}"`;
    const code = error === undefined ? "" : `, error="${error}"`;
    const metadata = this.#urls.metadataUrl(request);
    // With DPoP required, the DPoP challenge alone (RFC 9449 §7.1). Otherwise the Bearer one
    // as before: a client learns of DPoP from the resource metadata
    // (`dpop_signing_alg_values_supported`), and a Bearer client's parser meets one scheme.
    return {
      ok: false,
      status: 401,
      message,
      wwwAuthenticate: this.#dpop.required
        ? this.#dpop.challenge(metadata, this.#config.scopes, error)
        : `Bearer resource_metadata="${metadata}"${scope}${code}`,
    };
  }

  /**
   * A 401 with the DPoP challenge (RFC 9449 §7.1): `invalid_token` (a bound token as a bearer,
   * an unbound one as DPoP), `invalid_dpop_proof`, or `use_dpop_nonce` with a fresh nonce in
   * `DPoP-Nonce` (§9), which rides on every DPoP refusal while nonces are on.
   */
  #dpopRefusal(
    request: AuthRequest,
    message: string,
    error: "invalid_token" | "invalid_request" | "invalid_dpop_proof" | "use_dpop_nonce",
  ): AuthOutcome {
    return {
      ok: false,
      status: 401,
      message,
      wwwAuthenticate: this.#dpop.challenge(this.#urls.metadataUrl(request), this.#config.scopes, error),
      ...(this.#dpop.usesNonce ? { headers: { "dpop-nonce": this.#dpop.nonce() } } : {}),
    };
  }
}

function headerOf(request: AuthRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
