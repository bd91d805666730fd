import { hash } from "node:crypto";
import { accessRules, type UserClaims, userClaims } from "../access/access-rules.js";
import type { AuthConfig, TokenConfig } from "../config/types.js";
import { userKey } from "../credentials/user-ref.js";
import {
  type Authenticator,
  type AuthOutcome,
  type AuthRequest,
  type Identity,
  parseBearer,
  StaticTokenAuthenticator,
} from "../fronts/authenticator.js";
import { TokenRefused, TokenVerifier, type VerifiedToken } from "./token-verifier.js";

/** Verified tokens kept at most; past it the oldest go first. */
const MAX_CACHED = 10_000;
/** How long a token the issuer refused when asked is refused again without asking. */
const REFUSED_FOR_MS = 30_000;
/** The same failure of the identity provider is logged at most this often. */
const LOG_EVERY_MS = 30_000;

/** The endpoints a resource URL is published for, each with its own metadata (RFC 9728 §3.1). */
const ENDPOINTS = ["/mcp", "/sse", "/ws"] as const;

/** A verified token's outcome, kept until the token expires. */
interface Cached {
  readonly token: VerifiedToken;
  readonly outcome: AuthOutcome;
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
  readonly #ruleFor: ReturnType<typeof accessRules>;
  readonly #cache = new Map<string, Cached>();
  readonly #pending = new Map<string, Promise<Cached>>();
  /** Tokens the issuer refused when asked (introspection), by hash: not asked again for a while. */
  readonly #refused = new Map<string, { until: number; message: string }>();
  readonly #scopesSupported: string[];
  readonly #log: (message: string) => void;
  readonly #logged = new Map<string, number>();
  /**
   * The URLs the gateway is reached at, without an endpoint: `auth.resource`, else the origins
   * the HTTP front is bound to (see {@link bound}). Never taken from a request.
   */
  #bases: readonly string[];
  /** The `aud` values a token may name: each base, its endpoints, and `auth.audience`. */
  #audiences: ReadonlySet<string>;

  constructor(
    config: AuthConfig,
    options: { tokens?: readonly TokenConfig[]; onEvent?: (message: string) => void } = {},
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
    this.#bases = config.resource === undefined ? [] : [config.resource];
    this.#audiences = audiencesOf(this.#bases, config.audience);
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
    if (this.#config.resource !== undefined) return;
    this.#bases = [...origins];
    this.#audiences = audiencesOf(this.#bases, this.#config.audience);
    // Verified for other audiences: checked again.
    this.#cache.clear();
  }

  /** Tokens kept as verified now (a refused token is never kept), for tests and metrics. */
  get cachedTokens(): number {
    return this.#cache.size;
  }

  async authenticate(request: AuthRequest): Promise<AuthOutcome> {
    const bearer = parseBearer(headerOf(request, "authorization"));
    if (bearer.kind === "none")
      return this.#unauthorized(
        request,
        "Unauthorized: sign in, and send the access token as `Authorization: Bearer <token>`",
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
      if (refused !== undefined && refused.until > now)
        return this.#unauthorized(request, `Unauthorized: ${refused.message}`, "invalid_token");
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
        return this.#unauthorized(request, `Unauthorized: ${error.message}`, "invalid_token");
      }
      if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value!);
      this.#cache.set(key, cached);
    }
    return cached.outcome;
  }

  async #check(token: string): Promise<Cached> {
    const verified = await this.#verifier.verify(token, [...this.#audiences]);
    const user = userClaims(verified.claims, verified.issuer, this.#config);
    const rule = this.#ruleFor(user);
    const missing = this.#config.scopes.filter((scope) => !user.scopes.includes(scope));
    let outcome: AuthOutcome;
    if (rule === undefined) {
      outcome = {
        ok: false,
        status: 403,
        message:
          "Forbidden: you are signed in, but no rule of this gateway's auth.access admits you; ask its operator for access",
      };
    } else if (missing.length > 0) {
      const scope = [...new Set([...user.scopes, ...this.#config.scopes])].join(" ");
      outcome = {
        ok: false,
        status: 403,
        message: `Forbidden: the token lacks the scope(s) ${missing.join(", ")}; sign in again granting them`,
        wwwAuthenticate: `Bearer error="insufficient_scope", scope="${scope}"`,
      };
    } else {
      const identity: { -readonly [K in keyof Identity]: Identity[K] } = {
        key: principalKey(user),
        via: "oauth",
        issuer: verified.issuer,
        scopes: user.scopes,
        groups: user.groups,
        operator: rule.operator === true,
        expiresAt: verified.expiresAt,
      };
      if (user.sub !== undefined) identity.subject = user.sub;
      if (user.email !== undefined) {
        identity.email = user.email;
        identity.emailVerified = user.emailVerified;
      }
      // For policies (`caller.claims`); not enumerable, as below: no JSON or log line carries them.
      Object.defineProperty(identity, "claims", {
        value: Object.freeze({ ...verified.claims }),
        enumerable: false,
      });
      // For token exchange only: a function, and not enumerable, so that no JSON, log or
      // comparison of the identity carries the token.
      Object.defineProperty(identity, "accessToken", { value: () => token, enumerable: false });
      if (user.client !== undefined) identity.client = user.client;
      if (rule.profile !== undefined) identity.profile = rule.profile;
      if (rule.mode !== undefined) identity.mode = rule.mode;
      outcome = { ok: true, identity };
    }
    return { token: verified, outcome };
  }

  /** RFC 9728 metadata for `/.well-known/oauth-protected-resource` and its per-endpoint forms. */
  wellKnown(name: string, suffix: string, request: AuthRequest): Record<string, unknown> | undefined {
    if (name !== "oauth-protected-resource") return undefined;
    if (suffix !== "" && !(ENDPOINTS as readonly string[]).includes(suffix)) return undefined;
    return {
      resource: `${this.#base(request)}${suffix}`,
      authorization_servers: this.#config.issuers.map((issuer) => issuer.issuer),
      ...(this.#scopesSupported.length === 0 ? {} : { scopes_supported: this.#scopesSupported }),
      bearer_methods_supported: ["header"],
      resource_name: "mcplex",
    };
  }

  insufficientScope(request: AuthRequest, scope: string): string {
    return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${this.#metadataUrl(request)}"`;
  }

  #unauthorized(
    request: AuthRequest,
    message: string,
    error?: "invalid_token" | "invalid_request",
  ): AuthOutcome {
    const scope = this.#config.scopes.length === 0 ? "" : `, scope="${this.#config.scopes.join(" ")}"`;
    const code = error === undefined ? "" : `, error="${error}"`;
    return {
      ok: false,
      status: 401,
      message,
      wwwAuthenticate: `Bearer resource_metadata="${this.#metadataUrl(request)}"${scope}${code}`,
    };
  }

  /** Where the metadata of the endpoint a request went to is published. */
  #metadataUrl(request: AuthRequest): string {
    return `${this.#base(request)}/.well-known/oauth-protected-resource${endpointOf(request.path)}`;
  }

  /**
   * The resource URL to name to this request's client: of the accepted bases, the one its Host
   * names (so a client that came by `localhost` is told `localhost`), else the first. It names
   * only URLs whose tokens are accepted; the Host only picks which.
   */
  #base(request: AuthRequest): string {
    const bases = this.#bases;
    if (bases.length > 1) {
      const host = headerOf(request, "host")?.toLowerCase();
      const named = bases.find((base) => base === `http://${host}`);
      if (named !== undefined) return named;
    }
    return bases[0] ?? "http://127.0.0.1";
  }
}

/** The `aud` values accepted for the resource at `bases`: each, each endpoint of it, and `extra`. */
function audiencesOf(bases: readonly string[], extra: readonly string[] = []): ReadonlySet<string> {
  return new Set([
    ...bases.flatMap((base) => [base, `${base}/`, ...ENDPOINTS.map((e) => `${base}${e}`)]),
    ...extra,
  ]);
}

/**
 * The key of a caller's identity (limits, caches, sessions, parked calls, task handles): its
 * issuer with its subject, hashed, as the credential vault keys users (`userKey`); `user:` for
 * a user, `client:` for a machine caller (no `sub`), so neither can be taken for the other.
 */
function principalKey(user: UserClaims): string {
  return user.sub === undefined
    ? `client:${userKey(user.issuer, user.client ?? "")}`
    : `user:${userKey(user.issuer, user.sub)}`;
}

/** Which resource a path belongs to: `/mcp`, `/sse` (with its `/messages`), `/ws`, or the server (""). */
function endpointOf(path: string | undefined): string {
  if (path === "/mcp" || path === "/sse" || path === "/ws") return path;
  if (path === "/messages") return "/sse";
  return "";
}

function headerOf(request: AuthRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
