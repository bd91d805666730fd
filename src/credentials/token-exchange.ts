import { createHash } from "node:crypto";
import type { Configuration, ServerMetadata } from "openid-client";
import type { ServerConfig, TokenExchangeConfig } from "../config/types.js";
import { AbortedError, McplexError } from "../errors.js";
import type { Bearer } from "./bearer-fetch.js";
import type { UserConnectionPlan, UserCredentialSource, UserRef } from "./user-credentials.js";

/** The grant type of RFC 8693 token exchange. */
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** RFC 8693's token type of an OAuth access token: what is sent, and what is asked for. */
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** Also usable as a bearer token when the provider says it issued a JWT (RFC 8693 §3). */
const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt";

/** How long a refusal is remembered, as the introspection cache remembers an inactive token. */
const REFUSAL_TTL_MS = 30_000;
/** A token is exchanged again this long before it expires (at most a quarter of its life). */
const EXPIRY_MARGIN_MS = 30_000;
/** How long a token lives in the cache when the provider gives no `expires_in` and no JWT `exp`. */
const UNKNOWN_LIFETIME_MS = 60_000;
/** The provider's time to answer one discovery or exchange. */
const TIMEOUT_MS = 10_000;
/** Cached tokens (and refusals) kept at most, over all users and servers. */
const MAX_ENTRIES = 10_000;

/** What a {@link TokenExchangeSource} is made with. */
export interface TokenExchangeOptions {
  /**
   * The issuers of `auth.issuers`: the only providers a user's token is ever sent to. The
   * provider is the user's own issuer, or `credentials.exchange.issuer`, and must be one of these.
   */
  issuers: readonly string[];
  /** How long a refused exchange is remembered (ms). Default 30 s. */
  refusalTtlMs?: number;
  /** The provider's time to answer (ms). Default 10 s. */
  timeoutMs?: number;
  /** Cached tokens kept at most. Default 10,000. */
  maxEntries?: number;
  /** The clock (ms since the epoch); a test moves it to expire tokens. Default `Date.now`. */
  now?: () => number;
}

/** One exchange, as asked: who, where, for what. */
interface ExchangeRequest {
  server: string;
  issuer: string;
  config: TokenExchangeConfig;
  /** The cache key: the user's key and everything the exchanged token depends on (no secret). */
  key: string;
}

interface CachedToken {
  token: string;
  /** When to exchange again (ms): the token's expiry less a margin. */
  renewAt: number;
}

interface Refusal {
  error: McplexError;
  until: number;
}

/**
 * Tokens for servers of `credentials: { exchange }`: the signed-in user's own access token
 * exchanged (RFC 8693, with `openid-client`) at the identity provider for a token of the
 * server's audience, with its scopes. Never anyone else's token, never the shared config
 * credential, never the caller's own token as it is: when the exchange fails, the call fails.
 *
 * - The provider is discovered once per issuer (OpenID discovery, then RFC 8414).
 * - Tokens are cached per (user, provider, client, audience, resource, scopes) until shortly
 *   before they expire; concurrent asks of one user share one exchange (single-flight).
 * - A refusal is remembered for 30 s per (user, request, subject token), so a refused user
 *   does not hammer the provider; a user who signs in again (a new token) may try at once.
 *
 * @example
 * const source = new TokenExchangeSource({ issuers: config.auth.issuers.map((i) => i.issuer) });
 * const { bearer } = await source.plan(user, server); // throws TOKEN_EXCHANGE_FAILED when refused
 * const transport = new StreamableHTTPClientTransport(url, { fetch: bearerFetch(bearer) });
 */
export class TokenExchangeSource implements UserCredentialSource {
  readonly #issuers: ReadonlySet<string>;
  readonly #refusalTtl: number;
  readonly #timeout: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #tokens = new Map<string, CachedToken>();
  readonly #inflight = new Map<string, Promise<string>>();
  readonly #refusals = new Map<string, Refusal>();
  readonly #metadata = new Map<string, Promise<ServerMetadata>>();

  constructor(options: TokenExchangeOptions) {
    this.#issuers = new Set(options.issuers);
    this.#refusalTtl = options.refusalTtlMs ?? REFUSAL_TTL_MS;
    this.#timeout = options.timeoutMs ?? TIMEOUT_MS;
    this.#maxEntries = options.maxEntries ?? MAX_ENTRIES;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The plan of an exchange server: a `bearer` that gives the user's exchanged token. The first
   * token is exchanged here, so a refusal fails the plan before any connection is tried.
   *
   * @throws McplexError `TOKEN_EXCHANGE_FAILED` naming the server and the provider's answer.
   */
  async plan(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<UserConnectionPlan> {
    await this.token(user, server, signal);
    const bearer: Bearer = Object.assign((s?: AbortSignal) => this.token(user, server, s), {
      invalidate: (token: string) => this.invalidate(user, server, token),
    });
    return { bearer };
  }

  /**
   * The user's token for `server`: from the cache, or exchanged now (one exchange for all who
   * ask at once). `signal` ends this caller's wait, not an exchange others wait for too.
   */
  async token(user: UserRef, server: ServerConfig, signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const request = this.#request(user, server);
    const now = this.#now();
    const cached = this.#tokens.get(request.key);
    if (cached !== undefined && cached.renewAt > now) return cached.token;
    const subject = subjectTokenOf(user, request.server);
    const refusalKey = `${request.key}\n${digest(subject)}`;
    const refusal = this.#refusals.get(refusalKey);
    if (refusal !== undefined) {
      if (refusal.until > now) throw refusal.error;
      this.#refusals.delete(refusalKey);
    }
    let flight = this.#inflight.get(request.key);
    if (flight === undefined) {
      flight = this.#exchange(request, subject, refusalKey).finally(() => {
        this.#inflight.delete(request.key);
      });
      this.#inflight.set(request.key, flight);
    }
    return waitFor(flight, signal, request.server);
  }

  /** Drops the cached token of (user, server) if it is still `token` (the server refused it). */
  invalidate(user: UserRef, server: ServerConfig, token: string): void {
    const key = this.#request(user, server).key;
    if (this.#tokens.get(key)?.token === token) this.#tokens.delete(key);
  }

  /** Drops everything cached for a user (by {@link UserRef.key}): signed out, or revoked by an operator. */
  forget(userKey: string): void {
    const prefix = `${JSON.stringify(userKey)}\n`;
    for (const map of [this.#tokens, this.#refusals])
      for (const key of map.keys()) if (key.startsWith(prefix)) map.delete(key);
  }

  #request(user: UserRef, server: ServerConfig): ExchangeRequest {
    const credentials = server.credentials;
    if (typeof credentials !== "object" || credentials === null || !("exchange" in credentials)) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${server.name}: is not configured for token exchange (credentials: { exchange: ... })`,
        { server: server.name },
      );
    }
    const config = credentials.exchange;
    const issuer = config.issuer ?? user.issuer;
    if (issuer === undefined) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${server.name}: your sign-in names no identity provider to exchange your token at`,
        {
          server: server.name,
          hint: `Set credentials.exchange.issuer of ${server.name} to one of auth.issuers.`,
        },
      );
    }
    if (!this.#issuers.has(issuer)) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${server.name}: the identity provider ${issuer} is not one of auth.issuers, and users' tokens are sent to none other`,
        {
          server: server.name,
          hint: `Add ${issuer} to auth.issuers, or set credentials.exchange.issuer of ${server.name} to one of them.`,
        },
      );
    }
    const scopes = [...(config.scopes ?? [])].sort();
    const key = [
      JSON.stringify(user.key),
      JSON.stringify([issuer, config.clientId, config.audience, config.resource ?? null, scopes]),
    ].join("\n");
    return { server: server.name, issuer, config, key };
  }

  async #exchange(request: ExchangeRequest, subject: string, refusalKey: string): Promise<string> {
    const client = await import("openid-client");
    const { config } = request;
    const started = this.#now();
    let configuration: Configuration;
    try {
      configuration = this.#configuration(client, request, await this.#discover(request));
    } catch (error) {
      throw unreachable(request, error);
    }
    const parameters: Record<string, string> = {
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience: config.audience,
    };
    if (config.resource !== undefined) parameters.resource = config.resource;
    if (config.scopes !== undefined && config.scopes.length > 0) parameters.scope = config.scopes.join(" ");
    let answer: Awaited<ReturnType<typeof client.genericGrantRequest>>;
    try {
      answer = await client.genericGrantRequest(configuration, TOKEN_EXCHANGE_GRANT, parameters);
    } catch (error) {
      const refusal = refusalOf(client, error);
      if (refusal === undefined) throw unreachable(request, error);
      const failure = refused(request, refusal, subject);
      this.#remember(this.#refusals, refusalKey, { error: failure, until: this.#now() + this.#refusalTtl });
      throw failure;
    }
    const issued = answer.issued_token_type;
    if (
      answer.token_type.toLowerCase() !== "bearer" ||
      (issued !== undefined && issued !== ACCESS_TOKEN_TYPE && issued !== JWT_TOKEN_TYPE)
    ) {
      throw new McplexError(
        "TOKEN_EXCHANGE_FAILED",
        `${request.server}: the identity provider ${request.issuer} exchanged your token for a ${String(issued ?? answer.token_type)} token, not a bearer access token`,
        {
          server: request.server,
          hint: "Ask the provider for access tokens (requested_token_type access_token).",
        },
      );
    }
    const lifetime = lifetimeOf(answer.expires_in, answer.access_token, this.#now());
    const margin = Math.min(EXPIRY_MARGIN_MS, lifetime / 4);
    this.#remember(this.#tokens, request.key, {
      token: answer.access_token,
      renewAt: started + lifetime - margin,
    });
    return answer.access_token;
  }

  /** The issuer's metadata, discovered once (a failed discovery is tried again next time). */
  #discover(request: ExchangeRequest): Promise<ServerMetadata> {
    let metadata = this.#metadata.get(request.issuer);
    if (metadata === undefined) {
      metadata = discoverExchangeProvider(request.issuer, this.#timeout);
      metadata.catch(() => this.#metadata.delete(request.issuer));
      this.#metadata.set(request.issuer, metadata);
    }
    return metadata;
  }

  #configuration(
    client: typeof import("openid-client"),
    request: ExchangeRequest,
    metadata: ServerMetadata,
  ): Configuration {
    const { clientId, clientSecret } = request.config;
    const configuration = new client.Configuration(
      metadata,
      clientId,
      clientSecret === undefined ? undefined : { client_secret: clientSecret },
      clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
    );
    configuration.timeout = this.#timeout / 1000;
    if (insecureAllowed(request.issuer)) client.allowInsecureRequests(configuration);
    return configuration;
  }

  /** Stores `value`, keeping the map within its bound: expired entries go first, then the oldest. */
  #remember<T extends { renewAt: number } | { until: number }>(
    map: Map<string, T>,
    key: string,
    value: T,
  ): void {
    map.delete(key);
    if (map.size >= this.#maxEntries) {
      const now = this.#now();
      for (const [k, v] of map) if (("renewAt" in v ? v.renewAt : v.until) <= now) map.delete(k);
      for (const k of map.keys()) {
        if (map.size < this.#maxEntries) break;
        map.delete(k);
      }
    }
    map.set(key, value);
  }
}

/** The user's own access token, which only an exchange ever reads. */
function subjectTokenOf(user: UserRef, server: string): string {
  const token = user.subjectToken?.();
  if (token === undefined || token === "") {
    throw new McplexError(
      "TOKEN_EXCHANGE_FAILED",
      `${server}: this server is called with your own token exchanged at your identity provider, and your sign-in carries no token to exchange`,
      {
        server,
        hint: "Connect to the gateway with a signed-in OAuth access token (see the README's Sign-in).",
      },
    );
  }
  return token;
}

/**
 * An identity provider's metadata, as an exchange finds it: OpenID discovery
 * (`/.well-known/openid-configuration`), then RFC 8414 (`/.well-known/oauth-authorization-server`);
 * openid-client checks that the document names the issuer itself. Plain HTTP only on loopback.
 *
 * @throws Error saying what each way answered.
 */
export async function discoverExchangeProvider(
  issuer: string,
  timeoutMs = TIMEOUT_MS,
): Promise<ServerMetadata> {
  const client = await import("openid-client");
  if (new URL(issuer).protocol !== "https:" && !insecureAllowed(issuer)) {
    throw new Error(
      "it is not https: an exchange sends users' tokens and mcplex's client secret, so plain http is taken only on this machine (loopback)",
    );
  }
  const options = {
    timeout: timeoutMs / 1000,
    execute: insecureAllowed(issuer) ? [client.allowInsecureRequests] : [],
  };
  const failures: string[] = [];
  for (const algorithm of ["oidc", "oauth2"] as const) {
    try {
      const found = await client.discovery(new URL(issuer), "mcplex", undefined, client.None(), {
        ...options,
        algorithm,
      });
      return found.serverMetadata();
    } catch (error) {
      failures.push(`${algorithm === "oidc" ? "OpenID discovery" : "RFC 8414 metadata"}: ${reasonOf(error)}`);
    }
  }
  throw new Error(`no metadata (${failures.join("; ")})`);
}

/**
 * Plain HTTP only to a provider on this machine: an exchange sends the user's token and
 * mcplex's client secret, which must not cross a network in clear.
 */
function insecureAllowed(issuer: string): boolean {
  const url = new URL(issuer);
  if (url.protocol !== "http:") return false;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The provider's OAuth error, when it answered with one (it refused, rather than failed). */
function refusalOf(
  client: typeof import("openid-client"),
  error: unknown,
): { error: string; description?: string } | undefined {
  if (error instanceof client.ResponseBodyError) {
    return {
      error: error.error,
      ...(error.error_description === undefined ? {} : { description: error.error_description }),
    };
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const parameters = error.cause[0]?.parameters;
    return {
      error: parameters?.error ?? `HTTP ${error.status}`,
      ...(parameters?.error_description === undefined ? {} : { description: parameters.error_description }),
    };
  }
  return undefined;
}

/** What the user and the operator read of a refusal: the server, the provider, its answer. */
function refused(
  request: ExchangeRequest,
  answer: { error: string; description?: string },
  subject: string,
): McplexError {
  const said = answer.description === undefined ? answer.error : `${answer.error}: ${answer.description}`;
  return new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${request.server}: the identity provider ${request.issuer} refused to exchange your token: ${scrub(said, subject)}`,
    { server: request.server, hint: hintFor(request, answer.error) },
  );
}

function hintFor(request: ExchangeRequest, error: string): string {
  const { clientId, audience } = request.config;
  switch (error) {
    case "invalid_client":
    case "unauthorized_client":
      return `Check credentials.exchange.clientId and clientSecret of ${request.server}, and that the provider lets the client ${clientId} use token exchange.`;
    case "invalid_grant":
      return "Your sign-in token was not accepted for exchange (expired, or of another provider): sign in again.";
    case "invalid_target":
    case "invalid_scope":
      return `Ask the provider's administrator to let the client ${clientId} exchange tokens for ${audience} with these scopes, or correct credentials.exchange of ${request.server}.`;
    case "access_denied":
      return `The provider does not let your account reach ${audience} through mcplex; ask its administrator.`;
    default:
      return `Check that ${request.issuer} allows token exchange (RFC 8693) for the client ${clientId} and the audience ${audience}.`;
  }
}

/** The provider could not be asked (down, slow, or answered with something that is not OAuth). */
function unreachable(request: ExchangeRequest, error: unknown): McplexError {
  return new McplexError(
    "TOKEN_EXCHANGE_FAILED",
    `${request.server}: could not exchange your token at the identity provider ${request.issuer}: ${reasonOf(error)}`,
    {
      server: request.server,
      retryable: true,
      hint: `Check that ${request.issuer} is up and reachable from mcplex (\`mcplex doctor\` checks its metadata).`,
    },
  );
}

function reasonOf(error: unknown): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return "no answer in time";
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}

/** A provider's text, without the token it was sent, should it quote it back. */
function scrub(text: string, secret: string): string {
  return secret.length >= 8 ? text.split(secret).join("[token]") : text;
}

/** Milliseconds the exchanged token lives: `expires_in`, else the JWT's `exp`, else a minute. */
function lifetimeOf(expiresIn: number | undefined, token: string, now: number): number {
  if (typeof expiresIn === "number" && expiresIn > 0) return expiresIn * 1000;
  const payload = token.split(".")[1];
  if (payload !== undefined) {
    try {
      // Read only to know how long to keep it: the server checks the signature, not mcplex.
      const { exp } = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
      if (typeof exp === "number") return Math.max(0, exp * 1000 - now);
    } catch {
      // Not a JWT: an opaque token, kept for the default lifetime.
    }
  }
  return UNKNOWN_LIFETIME_MS;
}

/** A short digest of the subject token: tells a new sign-in from the refused one, keeps no token. */
function digest(token: string): string {
  return createHash("sha256").update(token).digest("base64url").slice(0, 22);
}

/** Waits for a shared exchange, giving up (alone) when this caller's signal aborts. */
function waitFor(flight: Promise<string>, signal: AbortSignal | undefined, server: string): Promise<string> {
  if (signal === undefined) return flight;
  return new Promise((resolve, reject) => {
    const abort = () =>
      reject(new AbortedError(`${server}: the call was cancelled while its token was exchanged`, { server }));
    signal.addEventListener("abort", abort, { once: true });
    flight.then(
      (token) => {
        signal.removeEventListener("abort", abort);
        resolve(token);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(error);
      },
    );
  });
}
